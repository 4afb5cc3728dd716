import { createHash } from 'node:crypto';

/**
 * The shared bucket, one Redis hash per API key, changed only by this script so that every step
 * is atomic. Time is the Redis server's (`TIME`): processes on machines with skewed clocks share
 * one timeline.
 *
 * Fields: `tokens` (may be fractional), `at` (when `tokens` was last brought up to date, ms),
 * `paused` (no token before this time, ms: a 429's Retry-After), `held` (when a token left the
 * FULL bucket and its attempt has not reported back yet, ms; 0 when none).
 *
 * The refill discipline is the in-process `TokenBucket`'s: a token taken from a full bucket
 * freezes refilling until that request's attempt has finished (`finish`), because the service
 * starts refilling its own bucket when the request ARRIVES; counting from the send would put us
 * ahead of the service by the request's delay, and the end of the first burst would meet a 429.
 * A holder that never reports (its process died) stops freezing the bucket after `stale` ms.
 *
 * ARGV: op (`take` | `finish` | `pause`), capacity, tokens per ms, pause ms, stale ms.
 * Answers `{ go, n }`: for `take`, go = 1 with n = 1 when the token left a full bucket (the caller
 * must then run `finish` when its attempt is done), or go = 0 with n = ms to wait.
 */
export const BUCKET_SCRIPT = `
local key = KEYS[1]
local op = ARGV[1]
local capacity = tonumber(ARGV[2])
local per_ms = tonumber(ARGV[3])
local pause_ms = tonumber(ARGV[4])
local stale_ms = tonumber(ARGV[5])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'at', 'paused', 'held')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
local paused = tonumber(state[3]) or 0
local held = tonumber(state[4]) or 0
if held > 0 and now - held > stale_ms then held = 0 end
if held == 0 and now > at then tokens = math.min(capacity, tokens + (now - at) * per_ms) end
at = now
local go, n = 0, 0
if op == 'pause' then
  if now + pause_ms > paused then paused = now + pause_ms end
  tokens = 0
  held = 0
elseif op == 'finish' then
  held = 0
  go = 1
elseif now < paused then
  n = paused - now
elseif tokens >= 1 then
  go = 1
  if tokens >= capacity then
    held = now
    n = 1
  end
  tokens = tokens - 1
elseif held > 0 then
  n = math.ceil(1 / per_ms)
else
  n = math.ceil((1 - tokens) / per_ms)
end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', at, 'paused', paused, 'held', held)
local idle = math.ceil((capacity - tokens) / per_ms)
if paused > now then idle = idle + (paused - now) end
redis.call('PEXPIRE', key, idle + stale_ms)
return { go, n }
`;

export const BUCKET_SCRIPT_SHA = createHash('sha1').update(BUCKET_SCRIPT).digest('hex');

export type BucketOp = 'take' | 'finish' | 'pause';

/** What the script answered to `take`. */
export type TakeAnswer = { go: true; fromFullBucket: boolean } | { go: false; waitMs: number };

export function takeAnswerOf(reply: unknown): TakeAnswer {
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error('unexpected answer from the rate-limit script');
  const [go, n] = reply.map(Number) as [number, number];
  return go === 1 ? { go: true, fromFullBucket: n === 1 } : { go: false, waitMs: Math.max(1, n) };
}
