--[[
  Draws a block of n fencing tokens from the per-key counter: a fragment,
  inlined where it is included (the uncontended paths define no function).

  The block starts above the counter, and never below the server clock in
  microseconds: the counter is raised to the clock whenever it is behind, on
  every grant. So tokens grow after the counter is gone, and after a failover
  to a replica that has an older counter or none, as long as the new
  master's clock is not behind the old one's by more than the failover took.

  The counter is kept only while it is needed, plus fence_grace: until the
  server clock has passed the block's last token (before that, the clock
  alone would give a lower token), and while the plain lock it was drawn for
  may hold the name (hold ms: inspection and a hand-off's confirmation read
  it; an extend keeps it as long, keep-fence). A counter ahead of the clock
  (more than one token per microsecond drawn, or a clock set back) lives
  until the clock passes it: its lead is what was drawn above the clock, less
  the time since; its end is an absolute time (PEXPIREAT) on the clock the
  token came from, so a replica that receives it ends it at the same clock
  time.

  The common case, the counter behind the clock (or gone), costs the least:
  the block ends at the clock plus n - 1, the counter is compared with the
  clock as text (both are decimal integers without leading zeros: the
  shorter is the smaller, and of the same length the first in order), and
  it is written with its end in the same SET (PX: as long as the PEXPIREAT
  below would give, counted from the clock's millisecond, give or take the
  script's own run time, far inside fence_grace). The
  clock is parsed from its two parts, never from a 16-digit text, and the
  last token is written as text built from them. A draw of one token on Redis 7 and
  later (redis.REDIS_VERSION_NUM is set) writes first and reads the counter
  it replaced in the same SET (SET ... GET): one command; when that counter
  was not behind the clock, the general path writes it again, in the same
  script. (A block of n > 1 reads first: a block drawn more often than
  every n microseconds keeps the counter ahead, and a write before the read
  would then be lost work.)

  Input:
    fence_key (a local) the fencing counter
    n         (a local) how many tokens to draw
    t         (a local) the server clock, as TIME replies it
    hold      (a local) ms from t during which the grant's plain lock may hold the name (0 for a group)
  Output:
    last      (a local) the block's last token; the first is last - n + 1
]]
--- @include "fence-grace"
local us = tonumber(t[2])
local clock_us, last = t[1] .. string.sub('00000' .. t[2], -6), t[1] * 1000000 + us + n - 1
local value, px = clock_us, math.max(math.floor((us + n - 1) / 1000) - math.floor(us / 1000) + 1, hold) + fence_grace
if n > 1 then
  -- (the last token as text: the clock's seconds, then its microseconds plus n - 1 when that stays below a second)
  value = us + n - 1 < 1000000 and t[1] .. string.sub('00000' .. (us + n - 1), -6) or string.format('%.0f', last)
end
local swap, counter = n == 1 and redis.REDIS_VERSION_NUM
if swap then
  counter = redis.call('SET', fence_key, value, 'PX', px, 'GET')
else
  counter = redis.call('GET', fence_key)
end
if not counter or #counter < #clock_us or (#counter == #clock_us and counter < clock_us) then
  if not swap then redis.call('SET', fence_key, value, 'PX', px) end
else
  last = math.max((tonumber(counter) or 0) + n, tonumber(clock_us) + n - 1)
  redis.call('SET', fence_key, string.format('%.0f', last))
  redis.call('PEXPIREAT', fence_key, string.format('%.0f', math.max(math.floor(last / 1000) + 1, tonumber(t[1]) * 1000 + math.floor(us / 1000) + hold) + fence_grace))
end
