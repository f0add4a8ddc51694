-- leasehold renew: extend the lease if owner and token still hold it.
-- KEYS[1] lease; ARGV[1] <len(owner)>:<owner>:<token>:, ARGV[2] TTL in ms.
-- Returns 1 when renewed, 0 when the lease is not the caller's.
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
