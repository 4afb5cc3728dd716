// `integration-sdk/redis`: one API key's rate budget shared by every process, kept in Redis.
export { redisRateLimiter, type RedisRateLimiterOptions, type RedisRateLimiterSeams } from './redis-rate-limiter.ts';
export { RateLimiterUnavailableError, ConfigurationError } from '../errors/index.ts';
export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './redis-client.ts';
