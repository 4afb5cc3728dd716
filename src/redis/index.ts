/**
 * `integration-sdk/redis`: one API key's rate budget shared by several processes, in Redis.
 * node-redis (>= 5) and ioredis are optional peers: this entry imports neither.
 */
export { redisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.ts';
export type { RedisClientLike } from './redis-client.ts';
export { RateLimiterUnavailableError, ConfigurationError } from '../errors/index.ts';
export type { RateLimiter } from '../transport/rate-limiter.ts';
