--[[
  Who holds a lock (holder() only).

  Input:
    KEYS[1] the lock "{key}"
  Output:
    {owner token, pttl}, or nil when free
]]
local owner = redis.call('GET', KEYS[1])
if not owner then return nil end
return {owner, redis.call('PTTL', KEYS[1])}
