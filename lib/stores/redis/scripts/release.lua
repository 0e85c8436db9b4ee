--[[
  Owner-checked release of a plain lock, then grants from the head of the
  queue (see the queue include); when nobody takes it over, the fencing
  counter is kept only until the server clock passes it (free-fence).

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
    {1} when the owner held the lock, else {0}; followed by the tail of the
    grants it made ({owner, token, ...} of the caller's instance).
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
-- The provider runs this script when waiters are likely queued (release-free.lua
-- serves the others): no EXISTS of the queue, admit() pops it (nothing when empty).
--- @include "fence"
--- @include "queue"
-- Free for admit(), which overwrites the key when it grants; deleted when it does not.
lock_is(false)
local tail = admit()
if not lock() then
  redis.call('DEL', KEYS[1])
  local fence_key = KEYS[2]
--- @include "free-fence"
end
return with({1}, tail)
