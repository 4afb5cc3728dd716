import { ConfigurationError } from '../errors/index.ts';
import { BUCKET_SCRIPT, BUCKET_SCRIPT_SHA } from './bucket-script.ts';

/** The part of a node-redis (`redis` >= 5) client or cluster this package uses. */
export interface NodeRedisLike {
  isOpen: boolean;
  isReady?: boolean;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  once?(event: 'ready', listener: () => void): unknown;
  on?(event: 'error', listener: (error: unknown) => void): unknown;
  listenerCount?(event: 'error'): number;
}

/** The part of an ioredis client or cluster this package uses. */
export interface IoRedisLike {
  status: string;
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  once?(event: 'ready', listener: () => void): unknown;
}

/** A node-redis or ioredis client (or cluster), as the user made it. */
export type RedisClientLike = NodeRedisLike | IoRedisLike;

/** Runs the bucket script on either client, whichever shape it has. */
export interface ScriptRunner {
  /** False while the client is (re)connecting: asking then would only queue the command. */
  ready(): boolean;
  /** While a client that has never been ready connects (`new Redis(url)` used at once): its first 'ready'. */
  connecting(): Promise<void> | undefined;
  run(keys: string[], args: string[]): Promise<unknown>;
}

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

/**
 * A client still making its first connection is waited for (within the command timeout), not
 * fallen back from: it was given as it is, connecting. A client that was ready once and is not now
 * has lost its connection: that is the fallback's case.
 */
function firstReady(client: { once?(event: 'ready', listener: () => void): unknown }, ready: () => boolean): () => Promise<void> | undefined {
  if (ready() || typeof client.once !== 'function') return () => undefined;
  let pending: Promise<void> | undefined = new Promise<void>((resolve) => client.once!('ready', () => resolve()));
  void pending.then(() => (pending = undefined));
  return () => (ready() ? undefined : pending);
}

/**
 * Detects the client by its shape and refuses one that is not connected. On `NOSCRIPT` (a
 * restarted server, a failover, another Cluster node) the script is sent whole with `EVAL`, which
 * also caches it where the key lives; the next `EVALSHA` finds it there.
 */
export function scriptRunnerFor(redis: unknown, who = 'redisRateLimiter'): ScriptRunner {
  if (typeof redis !== 'object' || redis === null) throw new ConfigurationError(`${who} needs \`redis\`: a connected node-redis or ioredis client`);
  const client = redis as Partial<NodeRedisLike & IoRedisLike>;
  if (typeof client.evalsha === 'function' && typeof client.status === 'string') {
    const io = client as IoRedisLike;
    // 'wait': made with lazyConnect and never connected; 'end': quit or disconnected for good.
    if (io.status === 'wait' || io.status === 'end') throw new ConfigurationError(`${who} needs a connected ioredis client (its status is '${io.status}': call connect() first)`);
    const ready = () => io.status === 'ready';
    return {
      ready,
      connecting: firstReady(io, ready),
      run: (keys, args) => io.evalsha(BUCKET_SCRIPT_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
        if (isNoScript(error)) return io.eval(BUCKET_SCRIPT, keys.length, ...keys, ...args);
        throw error;
      }),
    };
  }
  if (typeof client.evalSha === 'function' && typeof client.isOpen === 'boolean') {
    const node = client as NodeRedisLike;
    if (!node.isOpen) throw new ConfigurationError(`${who} needs a connected node-redis client: await client.connect() first`);
    // node-redis emits 'error' while it reconnects, and an EventEmitter with no listener for it
    // throws: the process would crash on the very outage the fallback is for. Only when the
    // application has no listener of its own.
    if (typeof node.on === 'function' && node.listenerCount?.('error') === 0) node.on('error', () => {});
    const ready = () => node.isReady ?? node.isOpen;
    return {
      ready,
      connecting: firstReady(node, ready),
      run: (keys, args) => node.evalSha(BUCKET_SCRIPT_SHA, { keys, arguments: args }).catch((error: unknown) => {
        if (isNoScript(error)) return node.eval(BUCKET_SCRIPT, { keys, arguments: args });
        throw error;
      }),
    };
  }
  throw new ConfigurationError(`${who} needs \`redis\`: a node-redis (>= 5) or ioredis client, neither was recognised`);
}
