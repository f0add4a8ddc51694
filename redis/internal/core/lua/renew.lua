-- leasehold renew: extend the lease if owner and token still hold it.
-- KEYS[1] lease hash; ARGV[1] owner, ARGV[2] token, ARGV[3] TTL in ms.
-- Returns 1 when renewed, 0 when the lease is not the caller's.
local h = redis.call('HMGET', KEYS[1], 'owner', 'token')
if h[1] == ARGV[1] and h[2] == ARGV[2] then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0
