--[[
  A try with three keys and two or three arguments: a try, and the first call
  of a wait for a key the provider has not seen contended (most find the key
  free, with nobody queued). When waiters are queued, or a semaphore holds
  the key (whose limit this plain request must match), the caller runs
  acquire.lua instead, which hands a free key to the head of the queue.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    ARGV[1] owner token
    ARGV[2] ttl in ms
    ARGV[3] n: fencing tokens the grant reserves (optional, default 1)
  Output:
    the (first) fencing token when granted, 0 when held, -1 when waiters are
    queued or a semaphore holds the key
]]
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if string.sub(redis.call('GET', KEYS[1]) or '', 1, 2) == '#x' then return -1 end
  return 0
end
local n = tonumber(ARGV[3]) or 1
local t, hold, fence_key = redis.call('TIME'), tonumber(ARGV[2]), KEYS[2]
--- @include "draw-fences"
return last - n + 1
