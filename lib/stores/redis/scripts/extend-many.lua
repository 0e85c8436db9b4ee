--[[
  Owner-checked PEXPIRE of many locks at once (the renewal of a batch), each
  keeping its fencing counter as long (keep-fence, as extend.lua).

  Input:
    KEYS[1] the locks "{key}", KEYS[1] to KEYS[n], then their counters "{key}:fence", KEYS[n + 1] to KEYS[2n], all in one Cluster slot
    ARGV[1] their owner tokens, ARGV[1] to ARGV[n], then their ttls in ms, ARGV[n + 1] to ARGV[2n]
  Output:
    one integer per lock, in order: 1 when extended, 0 when not the owner
]]
local n = #KEYS / 2
local out = {}
for i = 1, n do
  -- A plain lock: the key holds the owner token, with the lease as PX (as extend.lua).
  -- (Locks of several holders, where the key is not a string, would be checked here per holder, as extend.lua does.)
  if redis.call('GET', KEYS[i]) == ARGV[i] then
    redis.call('PEXPIRE', KEYS[i], ARGV[n + i])
    local fence_key, keep = KEYS[n + i], tonumber(ARGV[n + i])
--- @include "keep-fence"
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
