--[[
  Owner-checked extend of a place in a group (shared or semaphore): its own
  lease only; the marker and the group's keys end with the last lease.

  Input:
    KEYS[1] the lock "{key}"
    KEYS[2] a group's holders "{key}:h"
    KEYS[3] a group's fencing tokens "{key}:t"
    ARGV[1] owner token
    ARGV[2] ttl in ms
  Output:
    1 when extended, 0 when not a holder (or its lease ended)
]]
local marker = redis.call('GET', KEYS[1])
if not marker or string.byte(marker) ~= 35 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) <= now then return 0 end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[1], last)
redis.call('PEXPIREAT', KEYS[2], last)
redis.call('PEXPIREAT', KEYS[3], last)
return 1
