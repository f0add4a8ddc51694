-- leasehold holder: read the lease.
-- KEYS[1] lease.
-- Returns {} when free, else {lease, pttl}.
local v = redis.call('GET', KEYS[1])
if not v then
  return {}
end
return {v, redis.call('PTTL', KEYS[1])}
