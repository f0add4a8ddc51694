-- The store's acquire script before the free key with the clock ran first (see
-- BenchmarkInstructions), kept to measure the change against.
-- leasehold acquire: claim a free or expired lease and mint its token in one
-- atomic step.
-- KEYS[1] lease: a string <len(owner)>:<owner>:<token>:<label> with the TTL
-- KEYS[2] token counter: the largest token granted on the key (no TTL: it
-- outlives every lease on the key)
-- ARGV[1] <len(owner)>:<owner>:, ARGV[2] label, ARGV[3] TTL in milliseconds,
-- ARGV[4] (optional) the token to grant: Redlock proposes one token to every
-- master, so that every master of a grant holds the same one.
-- Returns {1, token} when granted, {0, lease, pttl} when held, and {2, counter}
-- when ARGV[4] is not above the counter (nothing is left written).
--
-- The token is the larger of the counter plus one and the server's clock in
-- microseconds, so it keeps increasing when a restart without persistence
-- loses the counter (as long as the server's clock does not step back).
-- A free key costs four calls: GET (free), TIME, SET the lease with the clock
-- as its token, GETSET the counter to it. GETSET returns the old counter, and
-- only when that is not below the token (two grants in one microsecond, a
-- clock stepped back, a proposal from a client whose clock is behind) or is
-- not a token does repair() fix both keys up or put them back. A held key
-- costs GET and PTTL. GETSET rather than SET ... GET: Redis 5.0 has it.
local max = 9007199254740991 -- 2^53 - 1: above it, Lua's doubles skip integers;
-- it is the largest token granted, and a counter at it grants nothing more

local v = redis.call('GET', KEYS[1])
if v then
  return {0, v, redis.call('PTTL', KEYS[1])}
end

-- refuse returns the error reply of a refusal: LEASEHOLD <kind> "<value>".
-- The client names the counter and types the error by the kind:
-- exhausted-counter (a number at or above max), foreign-counter (not a
-- number), exhausted-time, exhausted-proposal, bad-proposal.
local function refuse(kind, s)
  return redis.error_reply('LEASEHOLD ' .. kind .. ' ' ..
    string.format('%q', string.sub(s, 1, 32)))
end

-- number reads a decimal string: nil when it is not digits only, math.huge
-- when it has more than 16 significant digits (far above max).
local function number(s)
  local d = string.match(s, '^0*(%d*)$')
  if not d or s == '' then
    return nil
  end
  if #d > 16 then
    return math.huge
  end
  return tonumber(d) or 0
end

-- repair handles every counter the fast path does not: last is what GETSET
-- returned (an error table when the counter is not a string), tok and s the
-- token the lease and the counter were just given.
local function repair(last, tok, s)
  if type(last) == 'table' then -- GETSET failed and wrote nothing
    redis.call('DEL', KEYS[1])
    return last
  end
  local n = number(last)
  if not n or n >= max then -- put the counter back, hold nothing
    redis.call('SET', KEYS[2], last)
    redis.call('DEL', KEYS[1])
    if n then
      return refuse('exhausted-counter', last)
    end
    return refuse('foreign-counter', last)
  end
  if n < tok then -- a token with leading zeros: nothing to repair
    return {1, s}
  end
  if ARGV[4] then -- the proposal is refused: undo both writes
    redis.call('SET', KEYS[2], last)
    redis.call('DEL', KEYS[1])
    return {2, string.format('%.0f', n)}
  end
  s = string.format('%.0f', n + 1)
  redis.call('SET', KEYS[2], s)
  redis.call('SET', KEYS[1], ARGV[1] .. s .. ':' .. ARGV[2], 'PX', ARGV[3])
  return {1, s}
end

local s, tok
if ARGV[4] then
  tok = number(ARGV[4])
  if not tok or tok < 1 then
    return refuse('bad-proposal', ARGV[4])
  end
  if tok > max then
    return refuse('exhausted-proposal', ARGV[4])
  end
  s = string.format('%.0f', tok)
else
  -- The clock in microseconds as TIME's two strings joined (no arithmetic,
  -- no string.format): seconds, then microseconds padded to six digits.
  local t = redis.call('TIME')
  local us = t[2]
  if #us < 6 then
    us = string.sub('00000' .. us, -6)
  end
  s = t[1] .. us
  tok = number(s)
  if not tok or tok > max then -- a clock past the year 2255
    return refuse('exhausted-time', s)
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. s .. ':' .. ARGV[2], 'PX', ARGV[3])
local last = redis.pcall('GETSET', KEYS[2], s)
if last then -- false: no counter yet
  local n = tonumber(last) -- nil for an error table or a non-number
  if not (n and n < tok and #last <= 16 and not string.find(last, '%D')) then
    return repair(last, tok, s)
  end
end
return {1, s}
