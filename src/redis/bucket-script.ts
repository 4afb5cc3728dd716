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
 * KEYS[2] the egress bucket, KEYS[3] the egress's use per minute). ARGV 1-5 as above for the key's
 * bucket, then the egress's capacity, tokens per ms and op argument, then for `take` the tokens the
 * egress must keep after it (the interactive reserve a bulk take may not touch) and how long the
 * use per minute is kept. Both tokens are taken in one step or none is, so no key token is held
 * while waiting for the egress: `{1, keyId, egressId}` (attempt ids as above, each 0 or not),
 * `{0, keyMs, egressMs}` (pacing: what each bucket lacks, 0 for one that has a token) or
 * `{2, keyMs, egressMs}` (paused: what is left of each one's pause). `finish` takes both attempt ids
 * (0: none); `limited` is a 429 on the key: the egress is paused when the key still had a token (the
 * IP is out), the key otherwise, and answers `{1, 1}` (key) or `{1, 2}` (egress). `usage` (KEYS[1]:
 * the use per minute) answers `{now, minute, count, minute, count...}`.
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
  result = {2, pausedFor(key), pausedFor(egress)}
elseif waitFor(key, 1) > 0 or waitFor(egress, 1 + tonumber(ARGV[9])) > 0 then
  result = {0, waitFor(key, 1), waitFor(egress, 1 + tonumber(ARGV[9]))}
else
  result = {1, take(key), take(egress)}
  local minute = now - now % 60000
  if redis.call('HINCRBY', KEYS[3], minute, 1) == 1 then
    local keep = tonumber(ARGV[10])
    for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
      if tonumber(field) <= minute - keep then redis.call('HDEL', KEYS[3], field) end
    end
    redis.call('PEXPIRE', KEYS[3], keep + 60000)
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
 * (`keyMs`, `egressMs`: 0 for a bucket that is not the reason), as pacing or as a 429 pause.
 */
export type PairAnswer =
  | { go: true; keyAttemptId: number; egressAttemptId: number }
  | { go: false; paused: boolean; keyMs: number; egressMs: number };

export function pairAnswerOf(reply: unknown): PairAnswer {
  const [go, first, second] = numbersOf(reply, 3) as [number, number, number];
  if (go === 1) return { go: true, keyAttemptId: first, egressAttemptId: second };
  return { go: false, paused: go === 2, keyMs: first, egressMs: second };
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
