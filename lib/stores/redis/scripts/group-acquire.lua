--[[
  Acquires a place in a group: a shared (read) lock, or a permit of a
  semaphore of limit L >= 2; or queues (or re-checks) a waiter for it. While
  a group holds the key, the lock key holds its marker ("#s" or "#x<L>"),
  the holders are a sorted set scored by lease end and their fencing tokens
  a hash (see the queue include). Granted at once when the group fits (the
  key free, or a group of the same kind with room) and no live waiter is
  queued; else the request queues behind the others (FIFO), and grants from
  the queue go to its head while the head fits.

  Input:
    KEYS[1] the lock "{key}": a plain holder's owner token or a group marker
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    KEYS[5] a group's holders "{key}:h": owner -> lease end (ms)
    KEYS[6] a group's fencing tokens "{key}:t": owner -> token
    ARGV[1] owner token
    ARGV[2] ttl in ms
    ARGV[3] mode: 0 try once; 1 wait, first call (queues); 2 wait, re-check (refreshes the entry)
    ARGV[4] kind: "s" shared, "x<L>" a semaphore of limit L
    ARGV[5] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1, fencing token} when granted (in a re-check also: confirms a grant
    from the queue, restarting its lease at ttl), {0, ms until the first
    holder lease ends} when not, {-1, limit} when the key's exclusive holders
    or waiters have another limit; either followed by the tail of the grants
    it made from the queue ({owner, token, ...} of the caller's instance).
]]
local owner, ttl, mode, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
--- @include "fence"
--- @include "queue"
local limit = limit_of(kind)
if limit then
  local other = conflict(limit, mode ~= '2')
  if other then return {-1, other} end
end
purge()
local function hold(token)
  redis.call('ZADD', KEYS[5], now() + ttl, owner)
  if token then redis.call('HSET', KEYS[6], owner, token) end
  settle()
end
if mode == '2' and group_of(lock()) == kind and redis.call('ZSCORE', KEYS[5], owner) then
  hold()
  return {1, redis.call('HGET', KEYS[6], owner)}
end
local tail, mine = admit(owner)
if mine then
  hold()
  return with({1, mine}, tail)
end
local free = not lock()
local fits = free or (group_of(lock()) == kind and (not limit or redis.call('ZCARD', KEYS[5]) < limit))
if fits and redis.call('EXISTS', KEYS[3]) == 0 then
  if free then
    redis.call('SET', KEYS[1], '#' .. kind)
    lock_is('#' .. kind)
  end
  local token = fence(1, 0)
  hold(token)
  return with({1, string.format('%.0f', token)}, tail)
end
if mode ~= '0' then enqueue(owner, (now() + lease) .. ' ' .. ttl .. ' ' .. instance_id .. ' 1 ' .. kind, kind, mode == '1') end
return with({0, holder_ttl()}, tail)
