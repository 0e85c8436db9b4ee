--[[
  A waiter gives up: leaves the queue; if it was granted the key (or a place
  in a group) meanwhile, gives that back. Then grants from the head of the
  queue (the leaver may have blocked it). When the key ends free, the
  fencing counter is kept only until the server clock passes it (free-fence).

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    KEYS[5] a group's holders "{key}:h"
    KEYS[6] a group's fencing tokens "{key}:t"
    ARGV[1] owner token
    ARGV[2] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1} when it held the key, else {0}; followed by the tail of the grants
    it made ({owner, token, ...} of the caller's instance).
]]
--- @include "fence"
--- @include "queue"
local owner = ARGV[1]
local holder = lock()
local held = 0
if holder == owner then
  redis.call('DEL', KEYS[1])
  lock_is(false)
  held = 1
elseif group_of(holder) and redis.call('ZREM', KEYS[5], owner) == 1 then
  redis.call('HDEL', KEYS[6], owner)
  settle()
  held = 1
else
  redis.call('LREM', KEYS[3], 0, owner)
  local entry = redis.call('HGET', KEYS[4], owner)
  if entry then forget(owner, select(5, parse(entry)) or '') end
end
purge()
local tail = admit()
if not lock() then
  local fence_key = KEYS[2]
--- @include "free-fence"
end
return with({held}, tail)
