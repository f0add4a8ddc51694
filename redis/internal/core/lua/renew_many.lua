-- leasehold batch renew: renew.lua for each key in one call.
-- KEYS[i] lease hash; ARGV[3i-2] owner, ARGV[3i-1] token, ARGV[3i] TTL in ms.
-- Returns one 1 (renewed) or 0 (not the caller's) per key, in order.
local out = {}
for i, k in ipairs(KEYS) do
  local h = redis.call('HMGET', k, 'owner', 'token')
  if h[1] == ARGV[3*i-2] and h[2] == ARGV[3*i-1] then
    redis.call('PEXPIRE', k, ARGV[3*i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
