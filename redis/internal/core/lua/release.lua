-- leasehold release: delete the lease if owner and token still hold it, and
-- wake waiters.
-- KEYS[1] lease; ARGV[1] <len(owner)>:<owner>:<token>:, ARGV[2] wake-up
-- channel.
-- Returns 1 when released, 0 when the lease is not the caller's.
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], '')
  return 1
end
return 0
