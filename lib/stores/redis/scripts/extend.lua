--[[
  Owner-checked PEXPIRE.

  Input:
    KEYS[1] the lock "{key}"
    ARGV[1] owner token
    ARGV[2] ttl in ms
  Output:
    1 when extended, 0 when not the owner
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
