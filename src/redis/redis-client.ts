import { ConfigurationError } from '../errors/index.ts';
import { BUCKET_SCRIPT, BUCKET_SCRIPT_SHA } from './bucket-script.ts';

/** The part of a node-redis (>= 5) client or cluster the limiter uses. */
interface NodeRedisLike {
  isOpen?: boolean;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** The part of an ioredis client or cluster the limiter uses. */
interface IoRedisLike {
  status?: string;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/** A node-redis or ioredis client (or cluster), as the application created and connected it. */
export type RedisClientLike = NodeRedisLike | IoRedisLike;

/** Runs the bucket script: EVALSHA, and EVAL (which caches it again) when the server answers NOSCRIPT. */
export type ScriptRunner = (key: string, args: string[]) => Promise<unknown>;

/**
 * Recognises the client by shape (no import of either library: both are optional peers) and checks
 * it is connected, so that a forgotten `connect()` is a `ConfigurationError` at construction rather
 * than a fallback warning at the first request.
 */
export function scriptRunnerFor(redis: unknown): ScriptRunner {
  if (typeof redis !== 'object' || redis === null) {
    throw new ConfigurationError('redisRateLimiter needs `redis`: a connected node-redis (createClient().connect()) or ioredis client');
  }
  if (typeof (redis as NodeRedisLike).evalSha === 'function') {
    const client = redis as NodeRedisLike;
    if (client.isOpen === false) throw new ConfigurationError('redisRateLimiter: the node-redis client is not connected: await client.connect() first');
    return withReload(
      (key, args) => client.evalSha(BUCKET_SCRIPT_SHA, { keys: [key], arguments: args }),
      (key, args) => client.eval(BUCKET_SCRIPT, { keys: [key], arguments: args }),
    );
  }
  if (typeof (redis as IoRedisLike).evalsha === 'function') {
    const client = redis as IoRedisLike;
    if (client.status === 'end' || client.status === 'close' || client.status === 'wait') {
      throw new ConfigurationError(`redisRateLimiter: the ioredis client is not connected (status ${client.status}): connect it first`);
    }
    return withReload(
      (key, args) => client.evalsha(BUCKET_SCRIPT_SHA, 1, key, ...args),
      (key, args) => client.eval(BUCKET_SCRIPT, 1, key, ...args),
    );
  }
  throw new ConfigurationError('redisRateLimiter: `redis` is neither a node-redis nor an ioredis client (no evalSha or evalsha method)');
}

function withReload(evalSha: ScriptRunner, evalScript: ScriptRunner): ScriptRunner {
  return async (key, args) => {
    try {
      return await evalSha(key, args);
    } catch (error) {
      // After a restart or SCRIPT FLUSH (or on another node of a cluster) the script is not cached.
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return evalScript(key, args);
      throw error;
    }
  };
}
