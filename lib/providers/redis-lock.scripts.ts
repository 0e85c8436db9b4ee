import { createHash } from 'node:crypto';

/**
 * The Lua side of {@link RedisLockProvider}. Every script gets the same four
 * keys, all under one hash tag so they share a Cluster slot:
 *
 * - `KEYS[1]` `{<key>}`        the lock: owner token, with the lease as PX;
 * - `KEYS[2]` `{<key>}:fence`  the fencing counter (INCR per grant);
 * - `KEYS[3]` `{<key>}:q`      the waiters, a list of owner tokens in arrival order;
 * - `KEYS[4]` `{<key>}:w`      a hash owner -> "<deadline ms> <ttl ms>" of each waiter.
 *
 * A waiter whose deadline passed (its process stopped refreshing it) is
 * skipped. A free key goes to the first live waiter: the script sets the lock
 * to its token with a short lease (until it renews it) and PUBLISHes
 * `<owner token> <fencing token>`.
 * @internal
 */
export interface LockScript {
  readonly source: string;
  readonly sha: string;
}

const COMMON = `
if redis.replicate_commands then pcall(redis.replicate_commands) end

-- The server clock in ms, read only when a path needs it (queue entries).
local now_ms
local function now()
  if not now_ms then
    local t = redis.call('TIME')
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end

-- INCR of the per-key counter. A missing counter (never used, idle for a
-- week, or lost with a restart) starts from the server clock in microseconds,
-- so tokens still grow after Redis lost its data.
local function fence()
  local token = redis.call('INCR', KEYS[2])
  if token == 1 then
    local t = redis.call('TIME')
    local seed = t[1] .. string.sub('00000' .. t[2], -6)
    redis.call('SET', KEYS[2], seed)
    token = tonumber(seed)
  end
  redis.call('PEXPIRE', KEYS[2], 604800000)
  return token
end

-- Pops waiters until a live one; returns its owner and ttl, or nil.
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
      local deadline, ttl = string.match(entry, '^(%d+) (%d+)$')
      if tonumber(deadline) > now() then return owner, tonumber(ttl) end
    end
  end
end

-- Grants a free key to the next live waiter and tells it; returns its owner or nil.
-- ARGV[1] channel, ARGV[2] waiter lease (ms): the grant lasts until the waiter confirms.
local function hand_off()
  local owner, ttl = next_waiter()
  if not owner then return nil end
  redis.call('SET', KEYS[1], owner, 'PX', math.min(ttl, tonumber(ARGV[2])))
  -- The notice carries the fencing token, so the waiter can start without another round trip.
  redis.call('PUBLISH', ARGV[1], owner .. ' ' .. string.format('%.0f', fence()))
  return owner
end
`;

/**
 * ARGV: channel, waiter lease, owner, ttl, wait (0/1).
 * Returns `{1, token}` when granted (with wait=1 also: confirms a hand-off to
 * `owner`, restarting its lease at `ttl`), else `{0, pttl of the holder}`;
 * with wait=1 the caller is queued, or its queue entry refreshed.
 */
const ACQUIRE = `${COMMON}
local owner, ttl, lease = ARGV[3], ARGV[4], tonumber(ARGV[2])
local holder = redis.call('GET', KEYS[1])
if holder == owner and ARGV[5] == '1' then
  redis.call('PEXPIRE', KEYS[1], ttl)
  return {1, tonumber(redis.call('GET', KEYS[2]))}
end
if not holder then
  if redis.call('EXISTS', KEYS[3]) == 0 then
    -- Nobody queued: the uncontended path, five commands in all.
    redis.call('SET', KEYS[1], owner, 'PX', ttl)
    return {1, fence()}
  end
  local head, head_ttl = next_waiter()
  if not head or head == owner then
    redis.call('SET', KEYS[1], owner, 'PX', ttl)
    return {1, fence()}
  end
  redis.call('SET', KEYS[1], head, 'PX', math.min(head_ttl, lease))
  -- (%.0f: a plain concatenation would print a token this large in exponent notation)
  redis.call('PUBLISH', ARGV[1], head .. ' ' .. string.format('%.0f', fence()))
end
if ARGV[5] == '1' then
  if redis.call('HEXISTS', KEYS[4], owner) == 0 then redis.call('RPUSH', KEYS[3], owner) end
  redis.call('HSET', KEYS[4], owner, (now() + lease) .. ' ' .. ttl)
  redis.call('PEXPIRE', KEYS[3], lease)
  redis.call('PEXPIRE', KEYS[4], lease)
end
return {0, redis.call('PTTL', KEYS[1])}
`;

/** ARGV: channel, waiter lease, owner. Owner-checked delete, then hand-off. Returns 1 or 0. */
const RELEASE = `${COMMON}
if redis.call('GET', KEYS[1]) ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[3]) == 1 then hand_off() end
return 1
`;

/**
 * ARGV: channel, waiter lease, owner. A waiter gives up: leaves the queue; if
 * it was granted the key meanwhile, passes it on. Returns 1 when it held it.
 */
const LEAVE = `${COMMON}
local holder = redis.call('GET', KEYS[1])
local held = 0
if holder == ARGV[3] then
  redis.call('DEL', KEYS[1])
  holder = false
  held = 1
else
  redis.call('LREM', KEYS[3], 0, ARGV[3])
  redis.call('HDEL', KEYS[4], ARGV[3])
end
if not holder then hand_off() end
return held
`;

/** KEYS[1] lock; ARGV: owner, ttl. Owner-checked PEXPIRE. Returns 1 or 0. */
const EXTEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

function script(source: string): LockScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/** @internal */
export const SCRIPTS = {
  acquire: script(ACQUIRE),
  release: script(RELEASE),
  leave: script(LEAVE),
  extend: script(EXTEND),
} as const;

/** The four keys of a lock, under one hash tag. @internal */
export function lockKeys(key: string): [string, string, string, string] {
  const tag = `{${key}}`;
  return [tag, `${tag}:fence`, `${tag}:q`, `${tag}:w`];
}
