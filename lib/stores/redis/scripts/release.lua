--[[
  Owner-checked release, then hand-off to the first live waiter.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    ARGV[1] owner token
    ARGV[2] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1} when the owner held the lock, else {0}; followed by a hand-off's tail
    ({owner} or {owner, token}) when the key went to a waiter.
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[1])
  return {1}
end
--- @include "fence"
--- @include "queue"
local tail = hand_off()
-- A hand-off already replaced the key.
if not tail then redis.call('DEL', KEYS[1]) end
return with({1}, tail)
