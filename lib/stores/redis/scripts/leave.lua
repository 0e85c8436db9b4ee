--[[
  A waiter gives up: leaves the queue; if it was handed the key meanwhile,
  passes it on.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    ARGV[1] owner token
    ARGV[2] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1} when it held the key, else {0}; followed by a hand-off's tail
    ({owner} or {owner, token}) when the key went to a waiter.
]]
--- @include "fence"
--- @include "queue"
local holder = redis.call('GET', KEYS[1])
local held = 0
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  holder = false
  held = 1
else
  redis.call('LREM', KEYS[3], 0, ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
end
local tail
if not holder then tail = hand_off() end
return with({held}, tail)
