-- leasehold acquire: claim a free or expired lease and mint its token in one
-- atomic step.
-- KEYS[1] lease: a string <len(owner)>:<owner>:<token>:<label> with the TTL
-- KEYS[2] token counter (no TTL: it outlives every lease on the key)
-- ARGV[1] <len(owner)>:<owner>:, ARGV[2] label, ARGV[3] TTL in milliseconds
-- Returns {1, token} when granted, {0, lease, pttl} when held.
local v = redis.call('GET', KEYS[1])
if v then
  return {0, v, redis.call('PTTL', KEYS[1])}
end
local last = redis.call('GET', KEYS[2])
local n = 0
if last then
  n = nil
  if string.len(last) <= 16 and string.match(last, '^%d+$') then
    n = tonumber(last)
  end
  if not n or n >= 9007199254740991 then
    return redis.error_reply('LEASEHOLD token counter ' .. KEYS[2] .. ' holds ' ..
      string.format('%q', string.sub(last, 1, 32)) .. ', not a token')
  end
end
-- The token is the larger of the counter plus one and the server's clock in
-- microseconds, so it keeps increasing when a restart without persistence
-- loses the counter (as long as the server's clock does not step back).
local t = redis.call('TIME')
local tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
if n + 1 > tok then tok = n + 1 end
local s = string.format('%.0f', tok)
redis.call('SET', KEYS[1], ARGV[1] .. s .. ':' .. ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], s)
return {1, s}
