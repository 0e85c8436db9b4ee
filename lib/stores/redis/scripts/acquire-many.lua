--[[
  Takes several plain locks (exclusive, limit 1) at once, all or none: each
  key must be free (no holder, no group marker) with nobody queued; then
  each is set to its owner with its lease, and draws its block of fencing
  tokens from its own counter with includes/draw-fences.lua (above the
  counter, never below the server clock in microseconds, the counter kept
  for the lease and until the clock passes it). The keys come in threes, one three per lock, all in one Cluster
  slot (the provider groups them by slot); KEYS[3i-2], KEYS[3i-1], KEYS[3i]
  and ARGV[3i-2], ARGV[3i-1], ARGV[3i] are those of lock i.

  Input:
    KEYS[1] the first lock "{key}" (then the lock of every next three)
    KEYS[2] its fencing counter "{key}:fence"
    KEYS[3] its queue "{key}:q"
    ARGV[1] the first lock's owner token (then the owner of every next three)
    ARGV[2] its ttl in ms
    ARGV[3] n: fencing tokens its grant reserves
  Output:
    the first fencing token of each lock's block, in order, when all were
    granted; 0 when one of them is held or has waiters (nothing done)
]]
for i = 1, #KEYS, 3 do
  if redis.call('EXISTS', KEYS[i], KEYS[i + 2]) > 0 then return 0 end
end
local t = redis.call('TIME')
local out = {}
for i = 1, #KEYS, 3 do
  local n, hold, fence_key = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 1]), KEYS[i + 1]
  redis.call('SET', KEYS[i], ARGV[i], 'PX', ARGV[i + 1])
--- @include "draw-fences"
  out[#out + 1] = last - n + 1
end
return out
