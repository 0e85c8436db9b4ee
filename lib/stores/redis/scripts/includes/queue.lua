--[[
  The queue's helpers, included after a script's fast path (Lua builds a
  closure per definition on every run, and the uncontended path needs none).
  Needs fence and clock (include "fence" first).

  The lock key holds a plain holder's owner token, or, while a group holds
  the key, a marker: "#s" (shared holders) or "#x<L>" (a semaphore of limit
  L >= 2), with the holders in a sorted set scored by lease end (server ms)
  and their fencing tokens in a hash; the marker, the set and the hash all
  expire when the last lease ends. Plain scripts see the marker as a holder
  that is not them. A waiter entry is "<deadline ms> <ttl ms> <instance> <n>"
  for a plain (exclusive, limit 1) waiter, followed by " s" for a shared one
  and " x<L>" for a semaphore one. The waiters hash also counts the queued
  semaphore waiters ("#n") and records their limit ("#L"); plain waiters are
  not counted (their bookkeeping is on every contended plain call), so a
  semaphore's first call looks for them in the queue (conflict()).

  The lock key's value is read once per script (lock()) and remembered; a
  helper that writes the key remembers what it wrote (lock_is()), and so
  must a script that writes it after calling a helper that read it.

  A waiter whose deadline passed (its process stopped refreshing it) is
  skipped. admit() grants from the head of the queue while the head fits the
  holders: a plain waiter takes a free key (its token with a short lease,
  until it renews it, and its block of fencing tokens); consecutive shared
  waiters join a shared group; semaphore waiters join a group of their limit
  while it has room. A waiter of another instance is told by a PUBLISH of
  "<owner token> <fencing token>" on that instance's own channel
  ("<prefix>:<instance>"); a waiter of the calling instance is told in the
  script's reply instead.

  Input:
    KEYS[1]     the lock: an owner token or a group marker
    KEYS[3]     the queue: owner tokens in arrival order
    KEYS[4]     the waiters: owner -> entry, and "#n", "#L"
    KEYS[5]     the group's holders: owner -> lease end (ms)
    KEYS[6]     the group's fencing tokens: owner -> token
    ARGV[#ARGV] "<waiter lease ms> <instance id of the caller> <channel prefix>"
  Output:
    lease, instance_id, channel (locals) the last argument, parsed
    now, lock, lock_is, group_of, settle, purge, conflict, holder_ttl,
    limit_of, enqueue, forget, parse, head, admit, with (local functions)
]]
local lease, instance_id, channel = string.match(ARGV[#ARGV], '^(%d+) (%S+) (.+)$')
lease = tonumber(lease)

-- The server clock in ms, read only when a path needs it (queue entries).
local now_ms
local function now()
  if not now_ms then
    local t = clock()
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end

-- The lock key's value (false when free), read once; lock_is(v) records a write.
local lock_read, lock_value = false, false
local function lock()
  if not lock_read then
    lock_value, lock_read = redis.call('GET', KEYS[1]), true
  end
  return lock_value
end
local function lock_is(value)
  lock_value, lock_read = value, true
end

-- The group's kind ("s" or "x<L>") when the lock holds a marker, else nil.
local function group_of(holder)
  if holder and string.byte(holder) == 35 then return string.sub(holder, 2) end
  return nil
end

-- After a group changed: the marker and its keys end with the last lease; with no holder left, the key is free.
local function settle()
  local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
  if not last[2] then
    redis.call('DEL', KEYS[1], KEYS[5], KEYS[6])
    lock_is(false)
    return
  end
  redis.call('PEXPIREAT', KEYS[1], last[2])
  redis.call('PEXPIREAT', KEYS[5], last[2])
  redis.call('PEXPIREAT', KEYS[6], last[2])
end

-- While a group holds: drops holders whose lease ended, and settles the group.
local function purge()
  if not group_of(lock()) then return end
  local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now())
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now())
    redis.call('HDEL', KEYS[6], unpack(gone))
  end
  if #gone > 0 or redis.call('EXISTS', KEYS[5]) == 0 then settle() end
end

-- A waiter entry's deadline, ttl, instance, n and kind ("", "s" or "x<L>"), or nil when malformed.
-- (n is missing in entries of versions before fencing-token blocks: one token)
local function parse(entry)
  return string.match(entry, '^(%d+) (%d+) (%S+) ?(%d*) ?(%S*)$')
end

-- The limit of the key's exclusive holders or of its queued exclusive waiters when it is not `limit`, else nil.
-- `scan`: look for queued plain waiters too (a semaphore's first call; they are not counted).
local function conflict(limit, scan)
  local holder = lock()
  local group = group_of(holder)
  local held = group and string.match(group, '^x(%d+)$')
  if holder and not group then held = '1' end
  if held and tonumber(held) ~= limit then return tonumber(held) end
  if limit == 1 and held then return nil end
  local queued = redis.call('HGET', KEYS[4], '#L')
  if queued and tonumber(queued) ~= limit then return tonumber(queued) end
  if scan and limit ~= 1 and not queued then
    local owners = redis.call('LRANGE', KEYS[3], 0, -1)
    if #owners > 0 then
      for _, entry in ipairs(redis.call('HMGET', KEYS[4], unpack(owners))) do
        local deadline, _, _, _, kind = parse(entry or '')
        if deadline and kind == '' then return 1 end
      end
    end
  end
  return nil
end

-- When a re-check is worth it: the end of the first holder lease to end, -1 when free.
local function holder_ttl()
  if not group_of(lock()) then return redis.call('PTTL', KEYS[1]) end
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  return first[2] and math.max(0, tonumber(first[2]) - now()) or -1
end

-- The limit of an exclusive waiter's kind ("" plain: 1, "x<L>": L), nil for a shared one.
local function limit_of(kind)
  if kind == '' then return 1 end
  return tonumber(string.match(kind, '^x(%d+)$'))
end

-- Whether waiters of `kind` are counted in "#n"/"#L": semaphore waiters only.
local function counted(kind)
  return string.byte(kind) == 120
end

-- Queues (or refreshes) a waiter; `first`: its first call (not queued yet).
local function enqueue(owner, entry, kind, first)
  if first or redis.call('HEXISTS', KEYS[4], owner) == 0 then
    redis.call('RPUSH', KEYS[3], owner)
    if counted(kind) then
      redis.call('HSET', KEYS[4], '#L', limit_of(kind))
      redis.call('HINCRBY', KEYS[4], '#n', 1)
    end
  end
  redis.call('HSET', KEYS[4], owner, entry)
  redis.call('PEXPIRE', KEYS[3], lease)
  redis.call('PEXPIRE', KEYS[4], lease)
end

-- Forgets a waiter's entry (its place in the list is the caller's business).
local function forget(owner, kind)
  redis.call('HDEL', KEYS[4], owner)
  if counted(kind) and redis.call('HINCRBY', KEYS[4], '#n', -1) <= 0 then redis.call('HDEL', KEYS[4], '#n', '#L') end
end

-- Takes the first live waiter off the queue: owner, ttl, instance, n, kind
-- (its entry still in the waiters hash); dead ones are dropped. nil when none.
local function head()
  while true do
    local owner = redis.call('LPOP', KEYS[3])
    if not owner then
      redis.call('DEL', KEYS[4])
      return nil
    end
    local entry = redis.call('HGET', KEYS[4], owner)
    local deadline, ttl, instance, n, kind
    if entry then deadline, ttl, instance, n, kind = parse(entry) end
    if deadline and tonumber(deadline) > now() then return owner, tonumber(ttl), instance, tonumber(n) or 1, kind end
    if entry then forget(owner, kind or '') end
  end
end

-- Grants from the head of the queue while the head fits the holders (a head
-- that does not fit goes back to the front; a full semaphore pops none). Each grant lasts min(ttl, waiter
-- lease) until the waiter renews it. Returns the reply tail ({owner, token,
-- ...} of the caller's instance's waiters, other instances told by PUBLISH)
-- and the token of `caller` when it was admitted (not in the tail).
local function admit(caller)
  local tail, mine = {}, nil
  local group = group_of(lock())
  if lock() and not group then return tail, nil end
  local count = group and redis.call('ZCARD', KEYS[5]) or 0
  -- A semaphore's limit: while it is full no head fits (its own kind has no room, others never join it).
  local room = group and tonumber(string.match(group, '^x(%d+)$'))
  local admitted = false
  while true do
    if room and count >= room then break end
    local owner, ttl, instance, n, kind = head()
    if not owner then break end
    local limit = limit_of(kind)
    if group and (kind ~= group or (limit and count >= limit)) then
      redis.call('LPUSH', KEYS[3], owner)
      redis.call('PEXPIRE', KEYS[3], lease)
      break
    end
    forget(owner, kind)
    local ms = math.min(ttl, lease)
    local token = fence(n, kind == '' and ms or 0)
    if kind == '' then
      redis.call('SET', KEYS[1], owner, 'PX', ms)
      lock_is(owner)
    else
      if not group then
        group, room = kind, limit
        redis.call('SET', KEYS[1], '#' .. kind)
        lock_is('#' .. kind)
      end
      redis.call('ZADD', KEYS[5], now() + ms, owner)
      redis.call('HSET', KEYS[6], owner, token)
      count = count + 1
      admitted = true
    end
    -- (%.0f: a plain concatenation would print a token this large in exponent notation)
    token = string.format('%.0f', token)
    if owner == caller then
      mine = token
    elseif instance == instance_id then
      tail[#tail + 1] = owner
      tail[#tail + 1] = token
    else
      redis.call('PUBLISH', channel .. ':' .. instance, owner .. ' ' .. token)
    end
    if kind == '' then break end
  end
  -- (the callers settle their own changes: only a holder added here moves the group's end)
  if admitted then settle() end
  return tail, mine
end

-- Appends a reply tail to a reply.
local function with(reply, tail)
  if tail then for _, v in ipairs(tail) do reply[#reply + 1] = v end end
  return reply
end
