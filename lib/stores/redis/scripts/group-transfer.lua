--[[
  Owner-checked hand-over of a semaphore permit to a new owner of the same
  process (the engine's local hand-off of permits): the permit of ARGV[1]
  passes to ARGV[2] with a lease of ttl and a fencing token drawn above every
  earlier one. The holder count does not change, so the limit holds; the
  queue is not consulted (the engine bounds these hand-offs). When the old
  owner no longer holds (its lease ended, or released), nothing is handed
  over, and, as in any call, holders whose lease ended are dropped and the
  queue's head admitted (see the queue include).

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    KEYS[5] a group's holders "{key}:h"
    KEYS[6] a group's fencing tokens "{key}:t"
    ARGV[1] owner token of the permit's holder
    ARGV[2] owner token of the new holder
    ARGV[3] ttl in ms of the new holder's lease
    ARGV[4] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1, fencing token} when handed over, else {0}; either followed by the
    tail of the grants it made from the queue ({owner, token, ...} of the
    caller's instance).
]]
local from, to, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
--- @include "fence"
--- @include "queue"
purge()
local group = group_of(lock())
local score = group and string.sub(group, 1, 1) == 'x' and redis.call('ZSCORE', KEYS[5], from)
if not score then return with({0}, admit()) end
redis.call('ZREM', KEYS[5], from)
redis.call('HDEL', KEYS[6], from)
local token = fence(1, 0)
redis.call('ZADD', KEYS[5], now() + ttl, to)
redis.call('HSET', KEYS[6], to, string.format('%.0f', token))
settle()
return {1, string.format('%.0f', token)}
