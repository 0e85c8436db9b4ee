--[[
  How long a fencing counter outlives what it must cover, in ms: the lease of
  the plain lock that holds the name, and the moment the server clock (in
  microseconds) passes the counter (FENCE_GRACE_MS in redis-lock.scripts.ts).

  Input:
    none        (a constant)
  Output:
    fence_grace (a local)
]]
local fence_grace = 2000
