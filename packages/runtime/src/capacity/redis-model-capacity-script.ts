/**
 * The Lua scripts of {@link RedisModelCapacity}, one per call of the port, so
 * each call is one round trip and atomic. The algorithm is the one
 * docs/operations.md "Model capacity" describes, shared with the Postgres
 * implementation; its clock is the
 * server's `TIME` alone, in ms.
 *
 * Every model script takes the same KEYS, in {@link MODEL_KEY_SUFFIXES} order
 * and then the index of models seen, all under one hash-tagged prefix:
 * - `state` (hash): `paused` (until, ms), `adaptive` (float cap after 429s),
 *   `ceil` and `ceil_until` (the cap that drew the last 429, remembered until, ms),
 *   `conc` (the configured cap, for release), `hold` (EWMA of hold time, ms),
 *   `gvt` (global virtual time), `tok` (tokens in the window), `paced` (the paced time of the
 *   next grant, ms: the pacing of `requestPacing` in @cairn/engine);
 * - `slots` (zset): permit id → lease end;
 * - `window` (zset): permit id → grant time; `window-tokens` (hash): permit id → tokens;
 * - `waiters` (zset): waiter id → last ask; `waiter-info` (hash): waiter id →
 *   `priority|since|weight|tenant`;
 * - `vtime` (hash): tenant → virtual time (start-time fair queuing).
 *
 * @see {@link RedisModelCapacity}
 */

/** Suffixes of a model's keys (`<prefix>:cap:<model>:<suffix>`), in the order every model script takes them. */
export const MODEL_KEY_SUFFIXES = [
  'state',
  'slots',
  'window',
  'window-tokens',
  'waiters',
  'waiter-info',
  'vtime',
] as const;

/** What the window adds to `windowMs`: never less conservative than the provider's window counted from receipt. */
export const WINDOW_MARGIN_MS = 250;

/** Helpers every model script starts with. */
const PRELUDE = `
local K_STATE, K_SLOTS, K_WIN, K_WTOK, K_WAITERS, K_WINFO, K_VT, K_INDEX =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local MARGIN = ${WINDOW_MARGIN_MS}
local CHUNK = 500

local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end

-- A number from a reply or an argument; nil for a missing field or ''.
local function num(value)
  if value == nil or value == false or value == '' then return nil end
  return tonumber(value)
end

-- A score or bound with its microseconds (Lua's tostring keeps only 14 digits).
local function ms(value)
  return string.format('%.3f', value)
end

local function slice(list, i)
  return unpack(list, i, math.min(i + CHUNK - 1, #list))
end

-- HMGET of any number of fields (unpack has a limit).
local function hmget(key, fields)
  local out = {}
  for i = 1, #fields, CHUNK do
    local part = redis.call('HMGET', key, slice(fields, i))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

-- The concurrency cap in force: min of the configured and the adaptive, floored; nil when neither.
local function effective_cap(conc, adaptive)
  local cap = conc
  if adaptive and (cap == nil or adaptive < cap) then cap = adaptive end
  if cap then return math.floor(cap) end
  return nil
end

-- How many grants the pacing lets go now, and the paced time of the next (nil step: not paced).
local function paced_room(now, paced, step, tolerance)
  if step == nil then return math.huge, now end
  local next_at = math.max(paced or now, now)
  if next_at - now > tolerance then return 0, next_at end
  return math.floor((tolerance - (next_at - now)) / step) + 1, next_at
end

local function prune_slots(now)
  redis.call('ZREMRANGEBYSCORE', K_SLOTS, '-inf', ms(now))
end

-- Drops the grants that left the window (granted at or before now - span) with their tokens; returns the tokens left.
local function prune_window(now, span, tok)
  local old = redis.call('ZRANGEBYSCORE', K_WIN, '-inf', ms(now - span))
  if #old == 0 then return tok end
  for i = 1, #old, CHUNK do
    local part = redis.call('HMGET', K_WTOK, slice(old, i))
    for j = 1, #part do tok = tok - (num(part[j]) or 0) end
    redis.call('HDEL', K_WTOK, slice(old, i))
    redis.call('ZREM', K_WIN, slice(old, i))
  end
  if redis.call('ZCARD', K_WIN) == 0 then tok = 0 end
  redis.call('HSET', K_STATE, 'tok', tok)
  return tok
end

-- Sets every key of the model to expire a few windows after its last use (after its pause, if longer),
-- and records the model in the index until then.
local function touch(now, span, lease, model)
  local paused = num(redis.call('HGET', K_STATE, 'paused')) or 0
  local keep = math.ceil(math.max(3 * span, 2 * lease, paused - now + span))
  for i = 1, 7 do redis.call('PEXPIRE', KEYS[i], keep) end
  local expires = now + keep
  local listed = num(redis.call('ZSCORE', K_INDEX, model))
  if listed == nil or listed < expires then redis.call('ZADD', K_INDEX, ms(expires), model) end
  redis.call('ZREMRANGEBYSCORE', K_INDEX, '-inf', ms(now))
  local last = redis.call('ZRANGE', K_INDEX, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', K_INDEX, math.ceil(tonumber(last[2]) - now))
end
`;

/**
 * tryAcquire. ARGV: model, waiterId, tenant, weight, priority, waitedMs,
 * tokens, concurrency, rpm, tpm ('' for none), windowMs, waiterTtlMs,
 * leaseMs, the pacing's step and tolerance ('' for none), a random nonce for the permit id, '1' for a
 * probe (`ModelCapacity.ready`: a grant takes nothing and answers `{1, ''}`). Returns `{1, permitId,
 * holdsSlot}`, `{1, permitId, 0, 1}` when nothing governs the model (no
 * limit, no adaptive cap, no pause), or `{0, reason, retryAfterMs}`.
 */
export const ACQUIRE_SCRIPT = `${PRELUDE}
local model, waiter, tenant = ARGV[1], ARGV[2], ARGV[3]
local weight, priority, waited, tokens = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local conc, rpm, tpm = num(ARGV[8]), num(ARGV[9]), num(ARGV[10])
local span, ttl, lease = tonumber(ARGV[11]) + MARGIN, tonumber(ARGV[12]), tonumber(ARGV[13])
local step, tolerance = num(ARGV[14]), num(ARGV[15]) or 0
local now = clock()
-- The grant time rides in the id, for the hold time at release.
local id = ARGV[16] .. ':' .. string.format('%d', math.floor(now))
local probe = ARGV[17] == '1'

local st = redis.call('HMGET', K_STATE, 'paused', 'adaptive', 'hold', 'gvt', 'tok', 'paced')
local paused, adaptive = num(st[1]) or 0, num(st[2])

-- Fast path: nothing governs the model (the 4th element says so: the caller may remember it until a 429 is published).
if conc == nil and rpm == nil and tpm == nil and adaptive == nil and paused <= now then
  return {1, id, 0, 1}
end

if conc then redis.call('HSET', K_STATE, 'conc', conc) else redis.call('HDEL', K_STATE, 'conc') end
prune_slots(now)
local tok = prune_window(now, span, num(st[5]) or 0)
local gone = redis.call('ZRANGEBYSCORE', K_WAITERS, '-inf', '(' .. ms(now - ttl))
for i = 1, #gone, CHUNK do
  redis.call('HDEL', K_WINFO, slice(gone, i))
  redis.call('ZREM', K_WAITERS, slice(gone, i))
end

-- The caller in line: its age is the oldest it ever claimed.
local since = now - waited
local before = redis.call('HGET', K_WINFO, waiter)
if before then
  local old = tonumber(string.match(before, '^[^|]*|([^|]*)|'))
  if old and old < since then since = old end
end
redis.call('HSET', K_WINFO, waiter, ARGV[5] .. '|' .. ms(since) .. '|' .. ARGV[4] .. '|' .. tenant)
redis.call('ZADD', K_WAITERS, ms(now), waiter)

local function refuse(reason, retry)
  touch(now, span, lease, model)
  return {0, reason, math.max(1, math.ceil(retry))}
end

if paused > now then return refuse('paused', paused - now) end

-- The caller's place (0-based) in fair order among the waiters in line: tenants by start tag
-- max(vt, gvt), ties by name; within a tenant by priority, then age, then id. Parked waiters held
-- in line (their last ask recorded in the future) count toward how long the caller is told to
-- wait, not against a grant while room is free now (\`asking\`: only those that ask).
local gvt = num(st[4]) or 0
local function position(asking)
  local upto = '+inf'
  if asking then upto = ms(now) end
  local ids = redis.call('ZRANGEBYSCORE', K_WAITERS, ms(now - ttl), upto)
  if #ids <= 1 then return 0 end
  local infos = hmget(K_WINFO, ids)
  local left, weights, names, ahead = {}, {}, {}, 0
  for i = 1, #ids do
    local info = infos[i]
    if info then
      local p, s, w, t = string.match(info, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
      p, s = tonumber(p), tonumber(s)
      if left[t] == nil then
        left[t] = 0
        weights[t] = tonumber(w)
        names[#names + 1] = t
      end
      left[t] = left[t] + 1
      if t == tenant and ids[i] ~= waiter and
        (p < priority or (p == priority and (s < since or (s == since and ids[i] < waiter)))) then
        ahead = ahead + 1
      end
    end
  end
  weights[tenant] = weight
  local vts = hmget(K_VT, names)
  local tag = {}
  for i, t in ipairs(names) do tag[t] = math.max(num(vts[i]) or 0, gvt) end
  local pos, mine = 0, 0
  while true do
    local best
    for _, t in ipairs(names) do
      if left[t] > 0 and (best == nil or tag[t] < tag[best] or (tag[t] == tag[best] and t < best)) then
        best = t
      end
    end
    if best == tenant then
      if mine == ahead then return pos end
      mine = mine + 1
    end
    left[best] = left[best] - 1
    tag[best] = tag[best] + 1 / weights[best]
    pos = pos + 1
  end
end

local cap = effective_cap(conc, adaptive)
local inflight, count = 0, 0
if cap then inflight = redis.call('ZCARD', K_SLOTS) end
if rpm then count = redis.call('ZCARD', K_WIN) end
local room = math.huge
if cap then room = math.min(room, cap - inflight) end
if rpm then room = math.min(room, rpm - count) end
local tokens_fit = tpm == nil or tok <= 0 or tok + tokens <= tpm
if not tokens_fit then room = 0 end
local paced, next_at = paced_room(now, num(st[6]), step, tolerance)
room = math.min(room, paced)

if room <= 0 then
  -- Refused: the kind that keeps the caller waiting longest binds.
  local pos = 0
  if (cap and cap - inflight <= 0) or (rpm and rpm - count <= 0) or paced <= 0 then pos = position() end
  local reason, retry = nil, 0
  if cap and cap - inflight <= 0 then
    local hold = num(st[3]) or 1000
    reason, retry = 'concurrency', math.max(25, hold * (pos + 1) / cap)
  end
  if rpm and rpm - count <= 0 then
    -- Enough of the oldest grants must leave the window for this waiter's place; past the
    -- grants in the window, a whole window per rpm more (as the Postgres limiter counts it).
    local need = count - rpm + 1 + pos
    local n = math.min(math.max(need, 1), count)
    local entry = redis.call('ZRANGE', K_WIN, n - 1, n - 1, 'WITHSCORES')
    local wait = tonumber(entry[2]) + span - now + span * math.ceil(math.max(0, need - count) / math.max(1, rpm))
    if reason == nil or wait > retry then reason, retry = 'requests', wait end
  end
  if paced <= 0 then
    -- The caller's paced slot: as many steps after the next paced grant as waiters ahead of it.
    local wait = next_at - tolerance - now + pos * step
    if reason == nil or wait > retry then reason, retry = 'requests', wait end
  end
  if not tokens_fit then
    local need, freed, wait, start = tok + tokens - tpm, 0, 1000, 0
    local done = false
    while not done do
      local batch = redis.call('ZRANGE', K_WIN, start, start + 99, 'WITHSCORES')
      if #batch == 0 then break end
      local ids = {}
      for i = 1, #batch, 2 do ids[#ids + 1] = batch[i] end
      local toks = redis.call('HMGET', K_WTOK, unpack(ids))
      for j = 1, #ids do
        freed = freed + (num(toks[j]) or 0)
        wait = tonumber(batch[2 * j]) + span - now
        if freed >= need or freed >= tok then
          done = true
          break
        end
      end
      start = start + 100
    end
    if reason == nil or wait > retry then reason, retry = 'tokens', wait end
  end
  return refuse(reason, retry)
end

-- Room: granted iff the caller is among the next 'room' picks of fair order among those asking.
if redis.call('ZCOUNT', K_WAITERS, ms(now - ttl), ms(now)) > 1 then
  local pos = position(true)
  if pos >= room then
    local retry = math.min(100, 25 * (pos - room + 1))
    -- Paced: the caller's slot, as many steps after the room free now as the picks ahead of it beyond it.
    if step and room == paced then retry = math.max(retry, next_at - tolerance - now + pos * step) end
    return refuse('fairness', retry)
  end
end

-- A probe takes nothing: the caller stays in line as asking now, and asks for the permit at once.
if probe then
  touch(now, span, lease, model)
  return {1, ''}
end
redis.call('HDEL', K_WINFO, waiter)
redis.call('ZREM', K_WAITERS, waiter)
local tag = math.max(num(redis.call('HGET', K_VT, tenant)) or 0, gvt)
redis.call('HSET', K_STATE, 'gvt', tag)
redis.call('HSET', K_VT, tenant, tag + 1 / weight)
-- A tenant's time at or below the global one counts as the global one: forget it.
if redis.call('HLEN', K_VT) > 64 then
  local all = redis.call('HGETALL', K_VT)
  for i = 1, #all, 2 do
    if tonumber(all[i + 1]) <= tag then redis.call('HDEL', K_VT, all[i]) end
  end
end
if cap then redis.call('ZADD', K_SLOTS, ms(now + lease), id) end
if step then redis.call('HSET', K_STATE, 'paced', ms(next_at + step)) end
if rpm or tpm then
  redis.call('ZADD', K_WIN, ms(now), id)
  redis.call('HSET', K_WTOK, id, tokens)
  redis.call('HSET', K_STATE, 'tok', tok + tokens)
end
touch(now, span, lease, model)
if cap then return {1, id, 1} end
return {1, id, 0}
`;

/** renew. ARGV: model, permitId, windowMs, leaseMs. A lease already over stays over. */
export const RENEW_SCRIPT = `${PRELUDE}
local model, id = ARGV[1], ARGV[2]
local span, lease = tonumber(ARGV[3]) + MARGIN, tonumber(ARGV[4])
local now = clock()
local ends = num(redis.call('ZSCORE', K_SLOTS, id))
if ends == nil then return 0 end
if ends <= now then
  redis.call('ZREM', K_SLOTS, id)
  return 0
end
redis.call('ZADD', K_SLOTS, ms(now + lease), id)
touch(now, span, lease, model)
return 1
`;

/**
 * release. ARGV: model, permitId, usedTokens ('' for none), ok ('1' or '0'),
 * windowMs, leaseMs.
 */
export const RELEASE_SCRIPT = `${PRELUDE}
-- A model no limit ever governed has nothing to give back.
if redis.call('EXISTS', K_STATE) == 0 then return 0 end
local model, id, used, ok = ARGV[1], ARGV[2], num(ARGV[3]), ARGV[4] == '1'
local span, lease = tonumber(ARGV[5]) + MARGIN, tonumber(ARGV[6])
local now = clock()
redis.call('ZREM', K_SLOTS, id)
-- The request counts in the window from its end, never before the provider received it.
if redis.call('ZSCORE', K_WIN, id) then redis.call('ZADD', K_WIN, ms(now), id) end
local st = redis.call('HMGET', K_STATE, 'hold', 'adaptive', 'conc', 'tok', 'ceil', 'ceil_until')
local granted = tonumber(string.match(id, ':(%d+)$'))
if granted then
  local hold, avg = math.max(0, now - granted), num(st[1])
  if avg then hold = avg * 0.8 + hold * 0.2 end
  redis.call('HSET', K_STATE, 'hold', hold)
end
if used then
  local tok = prune_window(now, span, num(st[4]) or 0)
  local estimate = num(redis.call('HGET', K_WTOK, id))
  if estimate then
    redis.call('HSET', K_WTOK, id, used)
    redis.call('HSET', K_STATE, 'tok', tok + used - estimate)
  end
end
local adaptive = num(st[2])
if ok and adaptive then
  adaptive = adaptive + 1 / adaptive
  local conc, ceil = num(st[3]), num(st[5])
  -- Below the cap that drew the last 429 while the fleet remembers it.
  if ceil and (num(st[6]) or 0) > now then adaptive = math.min(adaptive, math.max(1, ceil - 1)) end
  if (conc and adaptive >= conc) or (conc == nil and adaptive > 1000) then
    redis.call('HDEL', K_STATE, 'adaptive', 'ceil', 'ceil_until')
  else
    redis.call('HSET', K_STATE, 'adaptive', adaptive)
  end
end
touch(now, span, lease, model)
return 1
`;

/**
 * rateLimited. ARGV: model, permitId, pauseMs, concurrency ('' for none),
 * windowMs, leaseMs, the channel on which the model is published (workers
 * that remember it ungoverned forget it), ceilingMemoryMs. Returns the ms
 * until the pause ends.
 */
export const RATE_LIMITED_SCRIPT = `${PRELUDE}
local model, id, pause, conc = ARGV[1], ARGV[2], tonumber(ARGV[3]), num(ARGV[4])
local span, lease = tonumber(ARGV[5]) + MARGIN, tonumber(ARGV[6])
local now = clock()
if conc then redis.call('HSET', K_STATE, 'conc', conc) else redis.call('HDEL', K_STATE, 'conc') end
local st = redis.call('HMGET', K_STATE, 'paused', 'adaptive')
local paused = num(st[1]) or 0
-- Halve once per pause: the 429s of requests sent before it add nothing.
if paused <= now then
  prune_slots(now)
  local cap = effective_cap(conc, num(st[2]))
  if cap then
    -- A cap in force drew it: remembered, successes stay below it for a while.
    redis.call('HSET', K_STATE, 'ceil', cap, 'ceil_until', ms(now + tonumber(ARGV[8])))
  else
    -- None was (its permits held no slot): the first cap is a guess, not remembered.
    cap = redis.call('ZCARD', K_SLOTS)
    if not redis.call('ZSCORE', K_SLOTS, id) then cap = cap + 1 end
    redis.call('HDEL', K_STATE, 'ceil', 'ceil_until')
  end
  redis.call('HSET', K_STATE, 'adaptive', math.max(1, math.floor(cap / 2)))
end
paused = math.max(paused, now + pause)
redis.call('HSET', K_STATE, 'paused', ms(paused))
redis.call('ZREM', K_SLOTS, id)
touch(now, span, lease, model)
redis.call('PUBLISH', ARGV[7], model)
return math.max(0, math.ceil(paused - now))
`;

/**
 * hold. ARGV: model, waiterId, forMs, windowMs, leaseMs. A waiter still in
 * line counts as having asked `forMs` from now (present until then plus the
 * waiter TTL); one that left is not put back.
 */
export const HOLD_SCRIPT = `${PRELUDE}
local model, waiter, hold = ARGV[1], ARGV[2], tonumber(ARGV[3])
local span, lease = tonumber(ARGV[4]) + MARGIN, tonumber(ARGV[5])
local now = clock()
if not redis.call('ZSCORE', K_WAITERS, waiter) then return 0 end
redis.call('ZADD', K_WAITERS, ms(now + math.max(0, hold)), waiter)
touch(now, math.max(span, hold), lease, model)
return 1
`;

/**
 * wake. ARGV: model, concurrency, rpm, tpm ('' for none), windowMs,
 * waiterTtlMs, leaseMs, the pacing's step and tolerance ('' for none). The parked waiters held in line that the room free
 * now lets in, beyond the waiters asking: as many as that room, in fair order
 * (tenants by start tag, then priority, age and id), none while the model is
 * paused. Each is marked as asking now (the room is kept for it for the
 * waiter TTL). Returns their ids.
 */
export const WAKE_SCRIPT = `${PRELUDE}
local model = ARGV[1]
local conc, rpm, tpm = num(ARGV[2]), num(ARGV[3]), num(ARGV[4])
local span, ttl, lease = tonumber(ARGV[5]) + MARGIN, tonumber(ARGV[6]), tonumber(ARGV[7])
local step, tolerance = num(ARGV[8]), num(ARGV[9]) or 0
local now = clock()
if redis.call('EXISTS', K_STATE) == 0 then return {} end
local held = redis.call('ZRANGEBYSCORE', K_WAITERS, '(' .. ms(now), '+inf')
if #held == 0 then return {} end
local st = redis.call('HMGET', K_STATE, 'paused', 'adaptive', 'gvt', 'tok', 'paced')
if (num(st[1]) or 0) > now then return {} end
prune_slots(now)
local tok = prune_window(now, span, num(st[4]) or 0)
local room = #held
local cap = effective_cap(conc, num(st[2]))
if cap then room = math.min(room, cap - redis.call('ZCARD', K_SLOTS)) end
if rpm then room = math.min(room, rpm - redis.call('ZCARD', K_WIN)) end
if tpm and tok >= tpm then room = 0 end
room = math.min(room, (paced_room(now, num(st[5]), step, tolerance)))
room = room - redis.call('ZCOUNT', K_WAITERS, ms(now - ttl), ms(now))
if room <= 0 then return {} end

-- The held waiters in fair order: per tenant by priority, age, id; tenants by start tag.
local infos = hmget(K_WINFO, held)
local lines, weights, names = {}, {}, {}
for i = 1, #held do
  local info = infos[i]
  if info then
    local p, s, w, t = string.match(info, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
    if lines[t] == nil then
      lines[t] = {}
      weights[t] = tonumber(w)
      names[#names + 1] = t
    end
    table.insert(lines[t], { id = held[i], p = tonumber(p), s = tonumber(s) })
  end
end
for _, t in ipairs(names) do
  table.sort(lines[t], function(a, b)
    if a.p ~= b.p then return a.p < b.p end
    if a.s ~= b.s then return a.s < b.s end
    return a.id < b.id
  end)
end
local gvt = num(st[3]) or 0
local vts = hmget(K_VT, names)
local tag, next = {}, {}
for i, t in ipairs(names) do
  tag[t] = math.max(num(vts[i]) or 0, gvt)
  next[t] = 1
end
local woken = {}
while #woken < room do
  local best
  for _, t in ipairs(names) do
    if next[t] <= #lines[t] and (best == nil or tag[t] < tag[best] or (tag[t] == tag[best] and t < best)) then
      best = t
    end
  end
  if best == nil then break end
  local id = lines[best][next[best]].id
  next[best] = next[best] + 1
  tag[best] = tag[best] + 1 / weights[best]
  redis.call('ZADD', K_WAITERS, ms(now), id)
  woken[#woken + 1] = id
end
touch(now, span, lease, model)
return woken
`;

/** leave. ARGV: waiterId. */
export const LEAVE_SCRIPT = `${PRELUDE}
redis.call('ZREM', K_WAITERS, ARGV[1])
redis.call('HDEL', K_WINFO, ARGV[1])
return 1
`;

/**
 * snapshot. KEYS: the index of models seen. ARGV: prefix, waiterTtlMs.
 * Returns, per model: model, waiting, inFlight, cap (-1 for none),
 * pausedForMs. A model's keys are named here from the prefix, all under its
 * hash tag (the set of models is only known inside), as BullMQ's scripts
 * name a job's keys from the queue's prefix.
 */
export const SNAPSHOT_SCRIPT = `
local function ms(value) return string.format('%.3f', value) end
local function num(value)
  if value == nil or value == false or value == '' then return nil end
  return tonumber(value)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local prefix, ttl = ARGV[1], tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms(now))
local out = {}
for _, model in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local base = prefix .. ':cap:' .. model .. ':'
  local st = redis.call('HMGET', base .. 'state', 'conc', 'adaptive', 'paused')
  local conc, adaptive, paused = num(st[1]), num(st[2]), num(st[3]) or 0
  local cap = conc
  if adaptive and (cap == nil or adaptive < cap) then cap = adaptive end
  out[#out + 1] = model
  out[#out + 1] = redis.call('ZCOUNT', base .. 'waiters', ms(now - ttl), '+inf')
  out[#out + 1] = redis.call('ZCOUNT', base .. 'slots', '(' .. ms(now), '+inf')
  out[#out + 1] = cap and math.floor(cap) or -1
  out[#out + 1] = math.max(0, math.ceil(paused - now))
end
return out
`;
