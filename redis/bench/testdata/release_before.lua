-- The store's release script before it found the owner's prefix with
-- string.find, kept to measure the change against.
-- leasehold release: delete the lease if owner and token still hold it, and
-- wake waiters.
-- KEYS[1] lease; ARGV[1] <len(owner)>:<owner>:<token>:, ARGV[2] wake-up
-- channel.
-- Returns 1 when released, 0 when the lease is not the caller's.
--
-- PUBLISH runs on every release, waiters or not: with no subscriber it is
-- one dictionary lookup (its server CPU is below the noise of redis/bench
-- TestScriptCost, which measures a release without it), and knowing whether anyone waits would itself cost a call
-- (PUBSUB NUMSUB, which also sees one Cluster node only, or a key the waiters
-- keep), so skipping it could only save that difference and would add a way
-- for a waiter to miss its wake-up.
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, string.len(ARGV[1])) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', ARGV[2], '')
  return 1
end
return 0
