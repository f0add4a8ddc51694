-- leasehold batch renew: renew.lua for each key in one call.
-- KEYS[i] lease; ARGV[2i-1] <len(owner)>:<owner>:<token>:, ARGV[2i] TTL in ms.
-- Returns one 1 (renewed) or 0 (not the caller's) per key, in order.
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  local p = ARGV[2*i-1]
  if v and string.sub(v, 1, string.len(p)) == p then
    redis.call('PEXPIRE', k, ARGV[2*i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
