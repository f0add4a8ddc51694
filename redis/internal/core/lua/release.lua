-- leasehold release: delete the lease if owner and token still hold it, and
-- wake waiters.
-- KEYS[1] lease hash; ARGV[1] owner, ARGV[2] token ('' matches any token of
-- the owner: redlock's clean-up of a node whose acquire reply was lost),
-- ARGV[3] wake-up channel.
-- Returns 1 when released, 0 when the lease is not the caller's.
local h = redis.call('HMGET', KEYS[1], 'owner', 'token')
if h[1] == ARGV[1] and (ARGV[2] == '' or h[2] == ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[3], h[2])
  return 1
end
return 0
