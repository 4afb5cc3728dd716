/**
 * One way to reach Postgres for the SDK's stores (the inbox's, the sync state's): `pg` loaded only
 * when a store is used (an optional peer), a pool made from a connection string or the user's own
 * pool, and migrations serialised across processes with an advisory lock.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { ConfigurationError } from '../errors/integration-error.ts';

/** How a store reaches Postgres: a connection string (or pool config), or an existing pool. */
export interface PostgresConnectionOptions {
  connectionString?: string;
  /** Extra `pg.Pool` settings when the store makes its own pool. */
  poolConfig?: PoolConfig;
  /** An existing `pg.Pool`; the store does not end it on `close()`. */
  pool?: Pool;
}

export async function loadPg(owner: string): Promise<typeof import('pg')> {
  try {
    const module = (await import('pg')) as typeof import('pg') & { default?: typeof import('pg') };
    return module.default ?? module;
  } catch (error) {
    throw new ConfigurationError(`${owner} needs the \`pg\` package (>= 8): npm install pg`, { cause: error });
  }
}

/** Checks the options and the schema name at construction; returns the schema. */
export function checkPostgresOptions(owner: string, options: PostgresConnectionOptions | undefined, schema: string): string {
  if (!options || (!options.pool && !options.connectionString && !options.poolConfig)) {
    throw new ConfigurationError(`${owner} needs { connectionString }, { poolConfig } or { pool }.`);
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigurationError(`${owner}: schema must be a lowercase SQL identifier (letters, digits, underscores).`);
  }
  return schema;
}

/** A store's pool: made on first use (or the user's), ended on `close()` only when the store made it. */
export interface PostgresPool {
  get(): Promise<Pool>;
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Rows changed by a statement. */
  changes(sql: string, params?: unknown[]): Promise<number>;
  /**
   * Runs `body` once per pool in one transaction holding the advisory lock `lockName`, so that
   * several processes starting at once migrate one after the other. A failure lets the next call try again.
   */
  migrateOnce(lockName: string, body: (client: PoolClient) => Promise<void>): Promise<void>;
  readonly closed: boolean;
  close(): Promise<void>;
}

export function postgresPool(owner: string, options: PostgresConnectionOptions): PostgresPool {
  let pool: Promise<Pool> | undefined;
  let closed = false;
  let migrated: Promise<void> | undefined;
  const get = () => {
    // After close() a new pool would open connections nobody ends.
    if (closed) return Promise.reject(new ConfigurationError(`This ${owner} is closed.`));
    return (pool ??= options.pool
      ? Promise.resolve(options.pool)
      : loadPg(owner).then((pg) => {
          const created = new pg.Pool({ connectionString: options.connectionString, ...options.poolConfig });
          // An idle client's error (the server restarted) must not crash the process; the next query reconnects.
          created.on('error', () => {});
          return created;
        }));
  };
  return {
    get,
    async query<R>(sql: string, params: unknown[] = []) {
      return (await (await get()).query(sql, params)).rows as R[];
    },
    async changes(sql: string, params: unknown[] = []) {
      return (await (await get()).query(sql, params)).rowCount ?? 0;
    },
    migrateOnce(lockName, body) {
      if (closed) return Promise.reject(new ConfigurationError(`This ${owner} is closed.`));
      migrated ??= (async () => {
        const client = await (await get()).connect();
        try {
          await client.query('BEGIN');
          // Several processes may start at once: one creates, the others wait and find it made.
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [lockName]);
          await body(client);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          migrated = undefined;
          throw error;
        } finally {
          client.release();
        }
      })();
      return migrated;
    },
    get closed() {
      return closed;
    },
    async close() {
      closed = true;
      if (!options.pool && pool) await (await pool).end();
      pool = undefined;
    },
  };
}
