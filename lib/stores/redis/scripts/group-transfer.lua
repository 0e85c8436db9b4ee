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
-- The common case, a semaphore's holder whose lease has not ended: the swap
-- alone, before the queue's helpers (no closure of theirs is built). Other
-- holders whose lease ended stay until the next call that counts the holders
-- (it purges first); the swap does not change the count, nor the last lease
-- but through the new holder's, so the group's end is read once.
local holder = redis.call('GET', KEYS[1])
if holder and string.sub(holder, 1, 2) == '#x' then
  local score, t = redis.call('ZSCORE', KEYS[5], from), clock()
  local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if score and tonumber(score) > ms then
    redis.call('ZREM', KEYS[5], from)
    redis.call('HDEL', KEYS[6], from)
    local token = string.format('%.0f', fence(1, 0))
    redis.call('ZADD', KEYS[5], ms + ttl, to)
    redis.call('HSET', KEYS[6], to, token)
    local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')[2]
    redis.call('PEXPIREAT', KEYS[1], last)
    redis.call('PEXPIREAT', KEYS[5], last)
    redis.call('PEXPIREAT', KEYS[6], last)
    return {1, token}
  end
end
-- The giver no longer holds (its lease ended, or it released): nothing is handed over.
--- @include "queue"
lock_is(holder)
purge()
return with({0}, admit())
