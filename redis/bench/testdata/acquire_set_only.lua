-- A bsm/redislock-like acquire (one SET NX PX in a script, no token), to
-- measure what a script costs beyond its calls. The value is what the
-- floor's compare-and-delete expects: the release's ARGV[1].
if redis.call('SET', KEYS[1], ARGV[1] .. '1:', 'NX', 'PX', ARGV[3]) then
  return {1, '1'}
end
return {0, redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
