--[[
  The queue's helpers, included after a script's fast path (Lua builds a
  closure per definition on every run, and the uncontended path needs none).
  Needs fence (include "fence" first).

  A waiter whose deadline passed (its process stopped refreshing it) is
  skipped. A free key goes to the first live waiter: the lock is set to its
  token with a short lease (until it renews it) and its block of fencing
  tokens is drawn. A waiter of another instance is told by a PUBLISH of
  "<owner token> <first fencing token>" on that instance's own channel
  ("<prefix>:<instance>"); a waiter of the calling instance is told in the
  script's reply instead.

  Input:
    KEYS[1]     the lock
    KEYS[3]     the queue: owner tokens in arrival order
    KEYS[4]     the waiters: owner -> "<deadline ms> <ttl ms> <instance> <n>"
    ARGV[#ARGV] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    lease, instance_id, channel (locals) the last argument, parsed
    now, next_waiter, hand_off, with (local functions)
]]
local lease, instance_id, channel = string.match(ARGV[#ARGV], '^(%d+) (%S+) (.+)$')
lease = tonumber(lease)

-- The server clock in ms, read only when a path needs it (queue entries).
local now_ms
local function now()
  if not now_ms then
    local t = redis.call('TIME')
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end

-- Pops waiters until a live one; returns its owner, ttl, instance and block size, or nil.
local function next_waiter()
  while true do
    local owner = redis.call('LPOP', KEYS[3])
    if not owner then
      redis.call('DEL', KEYS[4])
      return nil
    end
    local entry = redis.call('HGET', KEYS[4], owner)
    redis.call('HDEL', KEYS[4], owner)
    if entry then
      -- (n is missing in entries of versions before fencing-token blocks: one token)
      local deadline, ttl, instance, n = string.match(entry, '^(%d+) (%d+) (%S+) ?(%d*)$')
      if deadline and tonumber(deadline) > now() then return owner, tonumber(ttl), instance, tonumber(n) or 1 end
    end
  end
end

-- Grants a free key to the next live waiter, if any. The grant lasts
-- min(ttl, waiter lease) until the waiter renews it. Returns the reply tail:
-- nil when nobody was waiting, {owner} when another instance was told by
-- PUBLISH, {owner, token} when the waiter is the caller's own.
local function hand_off()
  local owner, ttl, instance, n = next_waiter()
  if not owner then return nil end
  redis.call('SET', KEYS[1], owner, 'PX', math.min(ttl, lease))
  -- (%.0f: a plain concatenation would print a token this large in exponent notation)
  local token = string.format('%.0f', fence(n))
  if instance == instance_id then return {owner, token} end
  redis.call('PUBLISH', channel .. ':' .. instance, owner .. ' ' .. token)
  return {owner}
end

-- Appends a hand-off's reply tail to a reply.
local function with(reply, tail)
  if tail then for _, v in ipairs(tail) do reply[#reply + 1] = v end end
  return reply
end
