--[[
  fence(n): draws a block of n fencing tokens (see draw-fences) and returns
  its first.

  Input:
    KEYS[2] the fencing counter
  Output:
    fence   (a local function) fence(n) -> first token of the block
]]
local function fence(n)
--- @include "draw-fences"
  return last - n + 1
end
