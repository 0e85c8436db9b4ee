--[[
  fence(n, hold): draws a block of n fencing tokens (see draw-fences) for a
  grant whose plain lock may hold the name for hold ms (0 for a group), and
  returns its first. clock(): the server's TIME, read once per script (the queue's
  deadlines and the fencing tokens of one script share it).

  Input:
    KEYS[2] the fencing counter
  Output:
    clock   (a local function) clock() -> the TIME reply, read once
    fence   (a local function) fence(n, hold) -> first token of the block
]]
local server_time
local function clock()
  if not server_time then server_time = redis.call('TIME') end
  return server_time
end
local function fence(n, hold)
  local t, fence_key = clock(), KEYS[2]
--- @include "draw-fences"
  return last - n + 1
end
