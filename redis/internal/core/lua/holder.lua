-- leasehold holder: read the lease.
-- KEYS[1] lease hash.
-- Returns {} when free, else {owner, label, token, pttl}.
local h = redis.call('HMGET', KEYS[1], 'owner', 'label', 'token')
if not h[1] then
  return {}
end
return {h[1], h[2] or '', h[3] or '0', redis.call('PTTL', KEYS[1])}
