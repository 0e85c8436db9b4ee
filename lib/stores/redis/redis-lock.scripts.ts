import { createHash } from 'node:crypto';

/**
 * The Lua side of {@link RedisLockProvider}. Every script gets the same four
 * keys, all under one hash tag so they share a Cluster slot:
 *
 * - `KEYS[1]` `{<key>}`        the lock: owner token, with the lease as PX;
 * - `KEYS[2]` `{<key>}:fence`  the fencing counter (n per grant, raised to the server clock in µs);
 * - `KEYS[3]` `{<key>}:q`      the waiters, a list of owner tokens in arrival order;
 * - `KEYS[4]` `{<key>}:w`      a hash owner -> "<deadline ms> <ttl ms> <instance> <n>" of each waiter
 *   (n: how many fencing tokens its grant reserves).
 *
 * and, after each script's own arguments, the same last one:
 * `"<waiter lease ms> <instance id of the caller> <channel prefix>"` (one
 * argument, parsed only on the paths that need it: every argument costs
 * every call, in the client and in the script run).
 *
 * A waiter whose deadline passed (its process stopped refreshing it) is
 * skipped. A free key goes to the first live waiter: the script sets the lock
 * to its token with a short lease (until it renews it) and draws its block of
 * fencing tokens. A waiter of another instance is told by a PUBLISH of
 * `<owner token> <first fencing token>` on that instance's own channel
 * (`<prefix>:<instance>`), so only the process that waits wakes up; a waiter
 * of the calling instance is told in the script's reply instead.
 * @internal
 */
export interface LockScript {
  readonly source: string;
  readonly sha: string;
}

// The per-key counter. A grant draws a block of n tokens (the engine hands
// the rest to local waiters) and answers the first. The block starts above
// the counter, and never below the server clock in microseconds: the
// counter is raised to the clock whenever it is behind, on every grant.
// So tokens grow after the counter is gone (never used, an hour old, lost
// with a restart), and after a failover to a replica that has an older
// counter or none, as long as the new master's clock is not behind the old
// one's by more than the failover took (a counter gains at most 16 per
// grant, far less than one per microsecond, so it stays near the clock).
// The counter lives an hour past its last grant, so that lock names used
// once (one per request or per entity) leave no key behind for long.
// `last` is the block's last token.
const DRAW = `
  local t = redis.call('TIME')
  local last = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + n, tonumber(t[1] .. string.sub('00000' .. t[2], -6)) + n - 1)
  redis.call('SET', KEYS[2], string.format('%.0f', last), 'PX', 3600000)`;
const FENCE = `
local function fence(n)${DRAW}
  return last - n + 1
end
`;

// The queue's helpers, defined after a script's fast path (Lua builds a
// closure per definition on every run, and the uncontended path needs none).
const QUEUE = `
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
`;

/**
 * ARGV[1..4]: owner, ttl, mode (0: try once; 1: wait, first call; 2: wait,
 * re-check), n (fencing tokens to reserve). Returns `{1, first token}` when granted (in a re-check also: confirms a
 * hand-off to `owner`, restarting its lease at `ttl`), else `{0, pttl of the
 * holder}`, followed by a hand-off's tail when a free key went to the head of
 * the queue. Waiting modes queue the caller, or refresh its entry.
 */
const ACQUIRE = `
local owner, ttl, mode, n = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
-- Nobody queued and the key free: the uncontended path, a few commands and no closure.
if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('SET', KEYS[1], owner, 'NX', 'PX', ttl) then
${DRAW}
  return {1, last - n + 1}
end
${FENCE}
local holder = redis.call('GET', KEYS[1])
if holder == owner and mode == '2' then
  -- A hand-off drew this waiter's block last (nobody else can draw while it holds the key).
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, tonumber(redis.call('GET', KEYS[2])) - n + 1}
end
if holder and mode == '0' then return {0, -1} end
${QUEUE}
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
`;

/**
 * KEYS[1] lock, KEYS[2] fence counter, KEYS[3] queue; ARGV: owner, ttl and,
 * optionally, n (fencing tokens to reserve, default 1). A try with three
 * keys and two or three arguments: a try, and the first call of a wait for a
 * key this provider has not seen contended (most find the key free, with
 * nobody queued). Returns the (first) fencing token when granted, 0 when
 * held, -1 when waiters are queued: the caller then runs the full acquire
 * (which queues a waiter, and hands a free key to the head of the queue).
 */
const TRY = `
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 0 end
local n = tonumber(ARGV[3]) or 1${DRAW}
return last - n + 1
`;

/** ARGV[1]: owner. Owner-checked release, then hand-off: `{1}` or `{0}`, followed by a hand-off's tail. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('DEL', KEYS[1])
  return {1}
end
${FENCE}
${QUEUE}
local tail = hand_off()
-- A hand-off already replaced the key.
if not tail then redis.call('DEL', KEYS[1]) end
return with({1}, tail)
`;

/**
 * KEYS[1] lock, KEYS[2] queue (two keys: an uncontended release is most
 * releases, and every key and argument costs every call); ARGV[1]: owner.
 * Returns 1 (freed), 0 (not the owner), or 2 when waiters are queued: the
 * caller then runs the full release, which hands the key on.
 */
const RELEASE_FREE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
redis.call('DEL', KEYS[1])
return 1
`;

/**
 * ARGV[1]: owner. A waiter gives up: leaves the queue; if it was granted the
 * key meanwhile, passes it on. Returns `{1}` when it held it, else `{0}`,
 * followed by a hand-off's tail.
 */
const LEAVE = `${FENCE}
${QUEUE}
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
`;

/** KEYS[1] lock; ARGV: owner, ttl. Owner-checked PEXPIRE. Returns 1 or 0. */
const EXTEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS[1] lock. Who holds it: `{owner, pttl}`, or nil when free. Used by `holder()` only. */
const HOLDER = `
local owner = redis.call('GET', KEYS[1])
if not owner then return nil end
return {owner, redis.call('PTTL', KEYS[1])}
`;

function script(source: string): LockScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** @internal */
export const SCRIPTS = {
  acquire: script(ACQUIRE),
  try: script(TRY),
  release: script(RELEASE),
  releaseFree: script(RELEASE_FREE),
  leave: script(LEAVE),
  extend: script(EXTEND),
  holder: script(HOLDER),
} as const;

/** The lock's own key: the store key as a hash tag. @internal */
export function lockTag(key: string): string {
  return `{${key}}`;
}

/** The four keys of a lock, under one hash tag. @internal */
export function lockKeys(key: string): [string, string, string, string] {
  const tag = lockTag(key);
  return [tag, `${tag}:fence`, `${tag}:q`, `${tag}:w`];
}
