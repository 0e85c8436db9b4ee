--[[
  Draws a block of n fencing tokens from the per-key counter: a fragment,
  inlined where it is included (the uncontended paths define no function).

  The block starts above the counter, and never below the server clock in
  microseconds: the counter is raised to the clock whenever it is behind, on
  every grant. So tokens grow after the counter is gone (never used, an hour
  old, lost with a restart), and after a failover to a replica that has an
  older counter or none, as long as the new master's clock is not behind the
  old one's by more than the failover took (a counter gains at most 16 per
  grant, far less than one per microsecond, so it stays near the clock). The
  counter lives an hour past its last grant, so that lock names used once
  leave no key behind for long.

  Input:
    KEYS[2] the fencing counter
    n       (a local) how many tokens to draw
    t       (a local) the server clock, as TIME replies it
  Output:
    last    (a local) the block's last token; the first is last - n + 1
]]
local last = math.max((tonumber(redis.call('GET', KEYS[2])) or 0) + n, tonumber(t[1] .. string.sub('00000' .. t[2], -6)) + n - 1)
redis.call('SET', KEYS[2], string.format('%.0f', last), 'PX', 3600000)
