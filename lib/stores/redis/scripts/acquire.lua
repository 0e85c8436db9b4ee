--[[
  Acquires a lock, or queues (or re-checks) a waiter for it.

  Input:
    KEYS[1] the lock "{key}": owner token, lease as PX
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    ARGV[1] owner token
    ARGV[2] ttl in ms
    ARGV[3] mode: 0 try once; 1 wait, first call (queues); 2 wait, re-check (refreshes the entry)
    ARGV[4] n: fencing tokens the grant reserves
    ARGV[5] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1, first fencing token} when granted (in a re-check also: confirms a
    hand-off to the owner, restarting its lease at ttl), else {0, pttl of the
    holder}; either followed by a hand-off's tail ({owner} or {owner, token})
    when a free key went to the head of the queue.
]]
local owner, ttl, mode, n = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
-- Nobody queued and the key free: the uncontended path, a few commands and no closure.
if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('SET', KEYS[1], owner, 'NX', 'PX', ttl) then
--- @include "draw-fences"
  return {1, last - n + 1}
end
--- @include "fence"
local holder = redis.call('GET', KEYS[1])
if holder == owner and mode == '2' then
  -- A hand-off drew this waiter's block last (nobody else can draw while it holds the key).
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, tonumber(redis.call('GET', KEYS[2])) - n + 1}
end
if holder and mode == '0' then return {0, -1} end
--- @include "queue"
local tail
if not holder then
  -- Free, but with a queue (its holder's lease ran out): the head goes first.
  local head, head_ttl, instance, head_n = next_waiter()
  if not head or head == owner then
    redis.call('SET', KEYS[1], owner, 'PX', ttl)
    return {1, fence(n)}
  end
  redis.call('SET', KEYS[1], head, 'PX', math.min(head_ttl, lease))
  local token = string.format('%.0f', fence(head_n))
  if instance == instance_id then
    tail = {head, token}
  else
    redis.call('PUBLISH', channel .. ':' .. instance, head .. ' ' .. token)
    tail = {head}
  end
end
if mode ~= '0' then
  if mode == '1' or redis.call('HEXISTS', KEYS[4], owner) == 0 then redis.call('RPUSH', KEYS[3], owner) end
  redis.call('HSET', KEYS[4], owner, (now() + lease) .. ' ' .. ttl .. ' ' .. instance_id .. ' ' .. n)
  redis.call('PEXPIRE', KEYS[3], lease)
  redis.call('PEXPIRE', KEYS[4], lease)
end
return with({0, redis.call('PTTL', KEYS[1])}, tail)
