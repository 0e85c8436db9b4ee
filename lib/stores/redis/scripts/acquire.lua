--[[
  Acquires a plain lock (exclusive, limit 1), or queues (or re-checks) a
  waiter for it. A group (shared holders or a semaphore, see the queue
  include) holds the key as a marker: the plain fast path fails on it, and
  the queue path checks the limit, queues, and admits from the queue.

  Input:
    KEYS[1] the lock "{key}": owner token, lease as PX (or a group marker)
    KEYS[2] the fencing counter "{key}:fence"
    KEYS[3] the queue "{key}:q"
    KEYS[4] the waiters "{key}:w"
    KEYS[5] a group's holders "{key}:h"
    KEYS[6] a group's fencing tokens "{key}:t"
    ARGV[1] owner token
    ARGV[2] ttl in ms
    ARGV[3] mode: 0 try once; 1 wait, first call (queues); 2 wait, re-check (refreshes the entry)
    ARGV[4] n: fencing tokens the grant reserves
    ARGV[5] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    {1, first fencing token} when granted (in a re-check also: confirms a
    hand-off to the owner, restarting its lease at ttl), {0, ms until the
    first holder lease ends} when not, {-1, limit} when the key's exclusive
    holders or waiters have another limit than 1; either followed by the
    tail of the grants it made from the queue ({owner, token, ...} of the
    caller's instance).
]]
local owner, ttl, mode, n = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
-- The provider runs this script for keys it has seen contended (try-acquire.lua
-- serves the others): the holder is read first, as it is most often there.
local holder = redis.call('GET', KEYS[1])
-- Nobody holds and nobody is queued: a few commands and no closure.
if not holder and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[1], owner, 'PX', ttl)
  local t, hold, fence_key = redis.call('TIME'), tonumber(ttl), KEYS[2]
--- @include "draw-fences"
  return {1, last - n + 1}
end
--- @include "fence"
if holder == owner and mode == '2' then
  -- A hand-off drew this waiter's block last (nobody else can draw while it holds the key).
  redis.call('PEXPIRE', KEYS[1], ttl)
  local fence_key, keep = KEYS[2], tonumber(ttl)
--- @include "keep-fence"
  return {1, tonumber(redis.call('GET', KEYS[2])) - n + 1}
end
if holder and mode == '0' and string.byte(holder) ~= 35 then return {0, -1} end
--- @include "queue"
lock_is(holder)
local other = conflict(1)
if other then return {-1, other} end
purge()
local tail, mine = admit(owner)
if mine then
  redis.call('PEXPIRE', KEYS[1], ttl)
  local fence_key, keep = KEYS[2], tonumber(ttl)
--- @include "keep-fence"
  return with({1, mine}, tail)
end
if not lock() and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[1], owner, 'PX', ttl)
  return with({1, fence(n, tonumber(ttl))}, tail)
end
if mode ~= '0' then enqueue(owner, (now() + lease) .. ' ' .. ttl .. ' ' .. instance_id .. ' ' .. n, '', mode == '1') end
return with({0, holder_ttl()}, tail)
