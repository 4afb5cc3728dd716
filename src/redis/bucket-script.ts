import { createHash } from 'node:crypto';

/**
 * The shared bucket, in one hash (one key, so one Cluster slot), changed only by this script, on
 * the Redis server's clock (`TIME`): processes whose clocks disagree share one timeline.
 *
 * ARGV: op (`take` | `finish` | `pause`), capacity, tokens per ms, op argument (the attempt id for
 * `finish`, ms for `pause`), ms after which an unfinished first attempt counts as finished.
 * Answers `{1, id}` for "go" (id > 0: the token left a full bucket, send `finish` with it when the
 * attempt has finished), `{0, ms}` for "wait ms for a token, then ask again" (pacing), or `{2, ms}`
 * for "the key is paused by a 429 for ms more" (a wait the caller's deadline is charged for).
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
local capacity = tonumber(ARGV[2])
local perMs = tonumber(ARGV[3])
local stale = tonumber(ARGV[5])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at', 'paused_until', 'attempt', 'attempt_since', 'seq')
local tokens = tonumber(b[1]) or capacity
local at = tonumber(b[2]) or now
local pausedUntil = tonumber(b[3]) or 0
local attempt = tonumber(b[4]) or 0
local since = tonumber(b[5]) or 0
local seq = tonumber(b[6]) or 0
if attempt ~= 0 and now - since > stale then
  attempt = 0
  at = math.max(at, since + stale)
end
if attempt ~= 0 then
  at = math.max(at, now)
elseif now > at then
  tokens = math.min(capacity, tokens + (now - at) * perMs)
  at = now
end
local result
if op == 'pause' then
  pausedUntil = math.max(pausedUntil, now + tonumber(ARGV[4]))
  tokens = 0
  at = pausedUntil
  attempt = 0
  result = {1, 0}
elseif op == 'finish' then
  if attempt ~= 0 and attempt == tonumber(ARGV[4]) then
    attempt = 0
    at = math.max(at, now)
  end
  result = {1, 0}
elseif now < pausedUntil then
  result = {2, pausedUntil - now}
elseif tokens >= 1 then
  local id = 0
  if tokens >= capacity then
    seq = seq + 1
    attempt = seq
    since = now
    id = seq
  end
  tokens = tokens - 1
  result = {1, id}
else
  result = {0, math.ceil((1 - tokens) / perMs)}
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', at, 'paused_until', pausedUntil, 'attempt', attempt, 'attempt_since', since, 'seq', seq)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / perMs) + math.max(0, pausedUntil - now) + stale + 60000)
return result
`;

export const BUCKET_SCRIPT_SHA = createHash('sha1').update(BUCKET_SCRIPT).digest('hex');

export type BucketOp = 'take' | 'finish' | 'pause';

/** The script's answer: go (with the id of a first attempt to finish, or 0), or wait `ms` (for a token, or out of a 429 pause). */
export type BucketAnswer = { go: true; attemptId: number } | { go: false; waitMs: number; paused: boolean };

export function answerOf(reply: unknown): BucketAnswer {
  if (!Array.isArray(reply) || reply.length !== 2) throw new TypeError('unexpected answer from the rate-limit script');
  const [go, value] = reply.map(Number) as [number, number];
  if (!Number.isFinite(value)) throw new TypeError('unexpected answer from the rate-limit script');
  return go === 1 ? { go: true, attemptId: value } : { go: false, waitMs: Math.max(1, value), paused: go === 2 };
}
