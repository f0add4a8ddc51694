-- The store's earlier acquire script (five calls on a free key: GET the
-- lease, GET the counter, TIME, SET both), before it was cut to fewer calls
-- to near the raw SET NX floor; kept to measure the current one against.
-- leasehold acquire: claim a free or expired lease and mint its token in one
-- atomic step.
-- KEYS[1] lease: a string <len(owner)>:<owner>:<token>:<label> with the TTL
-- KEYS[2] token counter (no TTL: it outlives every lease on the key)
-- ARGV[1] <len(owner)>:<owner>:, ARGV[2] label, ARGV[3] TTL in milliseconds,
-- ARGV[4] (optional) the token to grant: Redlock proposes one token to every
-- master, so that every master of a grant holds the same one.
-- Returns {1, token} when granted, {0, lease, pttl} when held, and {2, counter}
-- when ARGV[4] is not above the counter (nothing is written).
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
local tok
if ARGV[4] then
  if string.len(ARGV[4]) <= 16 and string.match(ARGV[4], '^%d+$') then
    tok = tonumber(ARGV[4])
  end
  if not tok or tok < 1 or tok >= 9007199254740991 then
    return redis.error_reply('LEASEHOLD proposed token ' ..
      string.format('%q', string.sub(ARGV[4], 1, 32)) .. ' is not a token')
  end
  if tok <= n then
    return {2, string.format('%.0f', n)}
  end
else
  -- The token is the larger of the counter plus one and the server's clock
  -- in microseconds, so it keeps increasing when a restart without
  -- persistence loses the counter (as long as the server's clock does not
  -- step back).
  local t = redis.call('TIME')
  tok = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if n + 1 > tok then tok = n + 1 end
end
local s = string.format('%.0f', tok)
redis.call('SET', KEYS[1], ARGV[1] .. s .. ':' .. ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[2], s)
return {1, s}
