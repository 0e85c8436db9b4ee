--[[
  Owner-checked release of a place in a group (shared or semaphore): frees
  only the caller's own permit, then grants from the head of the queue
  while the head fits (see the queue include).

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
    {1} when the owner held a place (its lease not ended), else {0};
    followed by the tail of the grants it made ({owner, token, ...} of the
    caller's instance).
]]
--- @include "fence"
--- @include "queue"
local held = 0
if group_of(lock()) then
  local score = redis.call('ZSCORE', KEYS[5], ARGV[1])
  if score then
    if tonumber(score) > now() then held = 1 end
    redis.call('ZREM', KEYS[5], ARGV[1])
    redis.call('HDEL', KEYS[6], ARGV[1])
    settle()
  end
end
purge()
return with({held}, admit())
