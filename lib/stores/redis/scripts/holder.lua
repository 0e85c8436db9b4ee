--[[
  Who holds a lock (holder() only). Of a group (shared holders or a
  semaphore), the holder whose lease ends last.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] a group's holders "{key}:h"
  Output:
    {owner token, pttl}, or nil when free
]]
local owner = redis.call('GET', KEYS[1])
if not owner then return nil end
if string.byte(owner) == 35 then
  owner = redis.call('ZRANGE', KEYS[2], -1, -1)[1]
  if not owner then return nil end
end
return {owner, redis.call('PTTL', KEYS[1])}
