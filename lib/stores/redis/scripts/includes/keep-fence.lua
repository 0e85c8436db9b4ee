--[[
  Keeps the fencing counter at least as long as a plain lock's new lease
  (plus fence_grace), when its holder's lease is set again (extend, a
  hand-off's confirmation): never shortens it, so what draw-fences set for
  the clock stays. A fragment, inlined where it is included.

  Input:
    fence_key (a local) the fencing counter
    keep      (a local) the lease just set, in ms
  Output:
    fence_left (a local) what was left of the counter's life, in ms, before (PTTL)
]]
--- @include "fence-grace"
local fence_left = redis.call('PTTL', fence_key)
if fence_left >= 0 and fence_left < keep + fence_grace then redis.call('PEXPIRE', fence_key, keep + fence_grace) end
