--[[
  Owner-checked release of a lock nobody waits for: the lock, its queue and
  its fencing counter only, as an uncontended release is most releases
  (every key and argument costs every call). When waiters are queued the
  caller runs release.lua, which hands the key on; when a group (shared holders or a semaphore) holds the key,
  group-release.lua, which frees the owner's own place.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the queue "{key}:q"
    KEYS[3] the fencing counter "{key}:fence" (once the lock is freed: kept until the clock passes it)
    ARGV[1] owner token
  Output:
    1 when freed, 0 when not the owner, 2 when waiters are queued (nothing
    done), 3 when a group holds the key (nothing done)
]]
local holder = redis.call('GET', KEYS[1])
if holder ~= ARGV[1] then
  if holder and string.byte(holder) == 35 then return 3 end
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
redis.call('DEL', KEYS[1])
local fence_key = KEYS[3]
--- @include "free-fence"
return 1
