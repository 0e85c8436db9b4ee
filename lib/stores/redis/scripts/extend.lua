--[[
  Owner-checked PEXPIRE, which keeps the fencing counter as long
  (keep-fence). When a group (shared holders or a semaphore) holds the key,
  the caller runs group-extend.lua instead.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    ARGV[1] owner token
    ARGV[2] ttl in ms
  Output:
    1 when extended, 0 when not the owner, 2 when a group holds the key (nothing done)
]]
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  if holder and string.byte(holder) == 35 then return 2 end
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local fence_key, keep = KEYS[2], tonumber(ARGV[2])
--- @include "keep-fence"
return 1
