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

  The common case, one token and the counter behind the clock (or gone),
  costs the least: the clock is the token, the counter is compared with it
  as text (both are decimal integers without leading zeros: the shorter is
  the smaller, and of the same length the first in order), and it is written
  with its end in the same SET (PX max(1, hold) + fence_grace from now: the
  clock has passed the token by then). The token is parsed from the clock's
  two parts, never from a 16-digit text, and no number is formatted. On
  Redis 7 and later (redis.REDIS_VERSION_NUM is set), a draw of one token
  writes the clock and reads the counter it replaced in the same call (SET
  ... GET); when that counter was ahead, the general path writes it again,
  in the same script.

  Input:
    fence_key (a local) the fencing counter
    n         (a local) how many tokens to draw
    t         (a local) the server clock, as TIME replies it
    hold      (a local) ms from t during which the grant's plain lock may hold the name (0 for a group)
  Output:
    last      (a local) the block's last token; the first is last - n + 1
]]
--- @include "fence-grace"
local last, counter
local clock_us, swap = t[1] .. string.sub('00000' .. t[2], -6), n == 1 and redis.REDIS_VERSION_NUM
if swap then
  counter = redis.call('SET', fence_key, clock_us, 'PX', math.max(1, hold) + fence_grace, 'GET')
else
  counter = redis.call('GET', fence_key)
end
if n == 1 and (not counter or #counter < #clock_us or (#counter == #clock_us and counter < clock_us)) then
  last = t[1] * 1000000 + t[2]
  if not swap then redis.call('SET', fence_key, clock_us, 'PX', math.max(1, hold) + fence_grace) end
else
  last = math.max((tonumber(counter) or 0) + n, tonumber(clock_us) + n - 1)
  redis.call('SET', fence_key, string.format('%.0f', last))
  redis.call('PEXPIREAT', fence_key, string.format('%.0f', math.max(math.floor(last / 1000) + 1, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + hold) + fence_grace))
end
