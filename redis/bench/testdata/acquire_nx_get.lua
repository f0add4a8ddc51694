-- An alternative acquire measured against the store's (not used): SET ...
-- NX GET (Redis 7.0) claims a free key in the call that reads a held one, so
-- a free key costs TIME, SET, SET ... GET (three calls) and a held one TIME,
-- SET and PTTL (three, against GET and PTTL). Counter repair left out: the
-- measurement only grants above the counter.
local t = redis.call('TIME')
local us = t[2]
if #us < 6 then us = string.sub('00000' .. us, -6) end
local s = t[1] .. us
local v = redis.call('SET', KEYS[1], ARGV[1] .. s .. ':' .. ARGV[2], 'NX', 'GET', 'PX', ARGV[3])
if v then
  return {0, v, redis.call('PTTL', KEYS[1])}
end
local last = redis.call('SET', KEYS[2], s, 'GET')
if last and not (tonumber(last) < tonumber(s)) then
  return redis.error_reply('counter ahead: not measured')
end
return {1, s}
