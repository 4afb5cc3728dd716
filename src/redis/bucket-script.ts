import { createHash } from 'node:crypto';

/**
 * The shared buckets, each in one hash, changed only by this script, on the Redis server's clock
 * (`TIME`): processes whose clocks disagree share one timeline.
 *
 * One bucket (KEYS[1], `redisRateLimiter`'s key bucket). ARGV: op (`take` | `finish` | `pause`),
 * capacity, tokens per ms, op argument (the attempt id for `finish`, ms for `pause`), ms after which
 * an unfinished first attempt counts as finished. Answers `{1, id}` for "go" (id > 0: the token left
 * a full bucket, send `finish` with it when the attempt has finished), `{0, ms}` for "wait ms for a
 * token, then ask again" (pacing), or `{2, ms}` for "the key is paused by a 429 for ms more" (a wait
 * the caller's deadline is charged for).
 *
 * Two buckets (the tenants' budget: KEYS[1] a key's bucket, the very one `redisRateLimiter` uses,
 * KEYS[2] the egress bucket; for `take` also KEYS[3] the egress's use per minute and KEYS[4-6] its
 * bulk line, below). ARGV 1-5 as above for the key's bucket, then the egress's capacity, tokens per
 * ms and op argument, then for `take` the tokens the egress must keep after it (the interactive
 * reserve a bulk take may not touch), how long the use per minute is kept, the kind (`bulk` or
 * `interactive`), the bulk line's grace and how long it remembers a tenant that stopped asking (ms).
 * Both tokens are taken in one step or none is, so no key token is held while waiting for the
 * egress: `{1, keyId, egressId, 0}` (attempt ids as above, each 0 or not), `{0, keyMs, egressMs,
 * turnMs}` (pacing: what each bucket lacks, 0 for one that has a token, and what the tenant lacks of
 * its turn in the bulk line) or `{2, keyMs, egressMs, 0}` (paused: what is left of each one's
 * pause). `finish` takes both attempt ids (0: none); `limited` is a 429 on the key: the egress is
 * paused when the key still had a token (the IP is out), the key otherwise, and answers `{1, 1}`
 * (key) or `{1, 2}` (egress). `usage` (KEYS[1]: the use per minute) answers `{now, minute, count,
 * minute, count...}`.
 *
 * The bulk line serves the bulk tenants of every process in turn (each process orders only its own
 * calls). A tenant is named by its key's bucket (KEYS[1]). KEYS[4] holds each waiting tenant's place
 * (a sequence: a tenant joins at the back, and goes to the back when served), KEYS[5] when each is
 * due to ask again (it is forgotten, place and all, once it is that long past it), KEYS[6] until
 * when each holds its place against those behind it: what it was told to wait plus the grace (the
 * jitter and lag of a process), and not at all while its own key is out or once it has been served
 * (it holds again when it asks again). A bulk take leaves in the egress, besides the interactive
 * reserve, one token for each tenant ahead of it that holds its place: the head goes as soon as
 * there is a token, the next once there are two, and so on, so that a tenant late to ask finds its
 * token there and the others still go with the tokens beyond it. A tenant told to wait for its turn
 * (`turnMs`, beyond what the egress lacks for any batch) is told until the egress has a token for
 * it and for each ahead. Nobody waits on a tenant that does not come back within the grace.
 *
 * Why an attempt id: the refill discipline of `TokenBucket` (a token taken from a full bucket starts
 * the refill only when its attempt finishes) must not be ended by a late `finish` of an older attempt,
 * and a process that died before finishing must not stop the refill for ever (hence the stale limit).
 */
export const BUCKET_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local op = ARGV[1]
local stale = tonumber(ARGV[5])

if op == 'usage' then
  local reply = {now}
  for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do reply[#reply + 1] = tonumber(v) end
  return reply
end

local function load(key, capacity, perMs)
  local b = redis.call('HMGET', key, 'tokens', 'at', 'paused_until', 'attempt', 'attempt_since', 'seq')
  local s = {key = key, capacity = capacity, perMs = perMs, tokens = tonumber(b[1]) or capacity, at = tonumber(b[2]) or now,
    pausedUntil = tonumber(b[3]) or 0, attempt = tonumber(b[4]) or 0, since = tonumber(b[5]) or 0, seq = tonumber(b[6]) or 0}
  if s.attempt ~= 0 and now - s.since > stale then
    s.attempt = 0
    s.at = math.max(s.at, s.since + stale)
  end
  if s.attempt ~= 0 then
    s.at = math.max(s.at, now)
  elseif now > s.at then
    s.tokens = math.min(capacity, s.tokens + (now - s.at) * perMs)
    s.at = now
  end
  return s
end

local function save(s)
  redis.call('HSET', s.key, 'tokens', tostring(s.tokens), 'at', s.at, 'paused_until', s.pausedUntil, 'attempt', s.attempt, 'attempt_since', s.since, 'seq', s.seq)
  redis.call('PEXPIRE', s.key, math.ceil(s.capacity / s.perMs) + math.max(0, s.pausedUntil - now) + stale + 60000)
end

local function take(s)
  local id = 0
  if s.tokens >= s.capacity then
    s.seq = s.seq + 1
    s.attempt = s.seq
    s.since = now
    id = s.seq
  end
  s.tokens = s.tokens - 1
  return id
end

local function pause(s, ms)
  s.pausedUntil = math.max(s.pausedUntil, now + ms)
  s.tokens = 0
  s.at = s.pausedUntil
  s.attempt = 0
end

local function finish(s, id)
  if s.attempt ~= 0 and s.attempt == id then
    s.attempt = 0
    s.at = math.max(s.at, now)
  end
end

local function pausedFor(s)
  return math.max(0, s.pausedUntil - now)
end

local function waitFor(s, need)
  if s.tokens >= need then return 0 end
  return math.ceil((need - s.tokens) / s.perMs)
end

local key = load(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
local result
if #KEYS == 1 then
  if op == 'pause' then
    pause(key, tonumber(ARGV[4]))
    result = {1, 0}
  elseif op == 'finish' then
    finish(key, tonumber(ARGV[4]))
    result = {1, 0}
  elseif pausedFor(key) > 0 then
    result = {2, pausedFor(key)}
  elseif waitFor(key, 1) == 0 then
    result = {1, take(key)}
  else
    result = {0, waitFor(key, 1)}
  end
  save(key)
  return result
end

-- The bulk line of the egress (KEYS[4] places, KEYS[5] due, KEYS[6] holds), for the tenant KEYS[1].
local function bulkLine(grace, forget)
  local places, due, holds, me = KEYS[4], KEYS[5], KEYS[6], KEYS[1]
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now - forget)) do
    redis.call('ZREM', places, gone)
    redis.call('ZREM', due, gone)
    redis.call('ZREM', holds, gone)
  end
  local function keep(waitMs)
    local ms = waitMs + grace + forget + 60000
    for _, name in ipairs({places, due, holds}) do
      if redis.call('PTTL', name) < ms then redis.call('PEXPIRE', name, ms) end
    end
  end
  local function toBack()
    local last = redis.call('ZREVRANGE', places, 0, 0, 'WITHSCORES')
    redis.call('ZADD', places, (tonumber(last[2]) or 0) + 1, me)
  end
  if not redis.call('ZSCORE', places, me) then toBack() end
  local line = {}
  -- How many tenants ahead of this one hold their place: a token is left in the egress for each.
  function line.ahead()
    local mine = tonumber(redis.call('ZSCORE', places, me))
    local count = 0
    for _, other in ipairs(redis.call('ZRANGEBYSCORE', holds, now, '+inf')) do
      local place = tonumber(redis.call('ZSCORE', places, other))
      if other ~= me and place and place < mine then count = count + 1 end
    end
    return count
  end
  function line.waits(ms, ownKeyOut)
    redis.call('ZADD', due, now + ms, me)
    if ownKeyOut then
      redis.call('ZREM', holds, me)
    else
      redis.call('ZADD', holds, now + ms + grace, me)
    end
    keep(ms)
  end
  function line.served()
    toBack()
    redis.call('ZADD', due, now, me)
    redis.call('ZREM', holds, me)
    keep(0)
  end
  return line
end

local egress = load(KEYS[2], tonumber(ARGV[6]), tonumber(ARGV[7]))
if op == 'finish' then
  finish(key, tonumber(ARGV[4]))
  finish(egress, tonumber(ARGV[8]))
  result = {1, 0, 0}
elseif op == 'limited' then
  if key.tokens >= 1 then
    pause(egress, tonumber(ARGV[4]))
    result = {1, 2}
  else
    pause(key, tonumber(ARGV[4]))
    result = {1, 1}
  end
elseif pausedFor(key) > 0 or pausedFor(egress) > 0 then
  result = {2, pausedFor(key), pausedFor(egress), 0}
else
  local need = 1 + tonumber(ARGV[9])
  local line, ahead = nil, 0
  if ARGV[11] == 'bulk' then
    line = bulkLine(tonumber(ARGV[12]), tonumber(ARGV[13]))
    ahead = line.ahead()
  end
  local keyMs, egressMs, turnMs = waitFor(key, 1), waitFor(egress, need), waitFor(egress, need + ahead)
  if turnMs == egressMs then turnMs = 0 end
  if keyMs > 0 or egressMs > 0 or turnMs > 0 then
    result = {0, keyMs, egressMs, turnMs}
    if line then line.waits(math.max(keyMs, egressMs, turnMs), keyMs > 0) end
  else
    result = {1, take(key), take(egress), 0}
    if line then line.served() end
    local minute = now - now % 60000
    if redis.call('HINCRBY', KEYS[3], minute, 1) == 1 then
      local keep = tonumber(ARGV[10])
      for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
        if tonumber(field) <= minute - keep then redis.call('HDEL', KEYS[3], field) end
      end
      redis.call('PEXPIRE', KEYS[3], keep + 60000)
    end
  end
end
save(key)
save(egress)
return result
`;

export const BUCKET_SCRIPT_SHA = createHash('sha1').update(BUCKET_SCRIPT).digest('hex');

export type BucketOp = 'take' | 'finish' | 'pause';

/** The script's answer: go (with the id of a first attempt to finish, or 0), or wait `ms` (for a token, or out of a 429 pause). */
export type BucketAnswer = { go: true; attemptId: number } | { go: false; waitMs: number; paused: boolean };

function numbersOf(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length) throw new TypeError('unexpected answer from the rate-limit script');
  const numbers = reply.map(Number);
  if (!numbers.every(Number.isFinite)) throw new TypeError('unexpected answer from the rate-limit script');
  return numbers;
}

export function answerOf(reply: unknown): BucketAnswer {
  const [go, value] = numbersOf(reply, 2) as [number, number];
  return go === 1 ? { go: true, attemptId: value } : { go: false, waitMs: Math.max(1, value), paused: go === 2 };
}

/**
 * The two-bucket script's answer to `take`: go with both attempt ids, or what each bucket lacks
 * (`keyMs`, `egressMs`: 0 for a bucket that is not the reason), as pacing or as a 429 pause, and
 * what a bulk take lacks of its turn in the egress's bulk line (`turnMs`, 0 when it is its turn).
 */
export type PairAnswer =
  | { go: true; keyAttemptId: number; egressAttemptId: number }
  | { go: false; paused: boolean; keyMs: number; egressMs: number; turnMs: number };

export function pairAnswerOf(reply: unknown): PairAnswer {
  const [go, first, second, turn] = numbersOf(reply, 4) as [number, number, number, number];
  if (go === 1) return { go: true, keyAttemptId: first, egressAttemptId: second };
  return { go: false, paused: go === 2, keyMs: first, egressMs: second, turnMs: turn };
}

/** Which bucket the `limited` op paused. */
export function limitedOf(reply: unknown): 'key' | 'egress' {
  return numbersOf(reply, 2)[1] === 2 ? 'egress' : 'key';
}

/** The `usage` op's answer: the server's time and each minute's count. */
export function usageOf(reply: unknown): { now: number; minutes: Map<number, number> } {
  if (!Array.isArray(reply) || reply.length % 2 !== 1) throw new TypeError('unexpected answer from the rate-limit script');
  const numbers = reply.map(Number);
  if (!numbers.every(Number.isFinite)) throw new TypeError('unexpected answer from the rate-limit script');
  const minutes = new Map<number, number>();
  for (let i = 1; i < numbers.length; i += 2) minutes.set(numbers[i]!, numbers[i + 1]!);
  return { now: numbers[0]!, minutes };
}
