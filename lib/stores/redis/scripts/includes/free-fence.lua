--[[
  After a plain lock was freed and nobody took it over: the fencing counter
  is kept only until the server clock passes it (plus fence_grace), which
  deletes it at once when the clock already has (PEXPIREAT in the past). A
  fragment, inlined where it is included. The counter's millisecond is its
  text less the last three digits (no 16-digit number parsed or formatted).

  Input:
    fence_key (a local) the fencing counter
  Output:
    fence_value (a local) the counter (its last token, as text), false when it was gone
]]
--- @include "fence-grace"
local fence_value = redis.call('GET', fence_key)
if fence_value then redis.call('PEXPIREAT', fence_key, (tonumber(string.sub(fence_value, 1, -4)) or 0) + 1 + fence_grace) end
