// The sync state's tables on Postgres, in their own schema, and what a database written by an
// earlier version gains when it is opened.
import type { PoolClient } from 'pg';

/** The tables of a schema's sync state (names quoted, schema-qualified). */
export function tablesOf(schema: string) {
  return { items: `"${schema}".items`, runs: `"${schema}".runs`, runErrors: `"${schema}".run_errors`, leases: `"${schema}".leases` };
}

/** Creates the schema and its tables when missing, and adds what later versions added. */
export async function createTables(client: PoolClient, schema: string): Promise<void> {
  const { items, runs, runErrors, leases } = tablesOf(schema);
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${items} (
      scope TEXT NOT NULL,
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      external_id TEXT NOT NULL,
      store_id TEXT NOT NULL,
      fingerprint TEXT,
      sent_at BIGINT,
      store_ids TEXT[],
      seen_seq BIGINT,
      seen_index BIGINT,
      PRIMARY KEY (scope, kind, key)
    )`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${runs} (
      seq BIGSERIAL PRIMARY KEY,
      run_id TEXT NOT NULL UNIQUE,
      scope TEXT NOT NULL,
      kind TEXT NOT NULL,
      base_url TEXT NOT NULL,
      merchant_id TEXT NOT NULL,
      is_full BOOLEAN NOT NULL,
      started_at BIGINT NOT NULL,
      finished_at BIGINT,
      outcome TEXT NOT NULL,
      complete BOOLEAN NOT NULL DEFAULT false,
      total BIGINT NOT NULL DEFAULT 0,
      unchanged BIGINT NOT NULL DEFAULT 0,
      sent BIGINT NOT NULL DEFAULT 0,
      created BIGINT,
      updated BIGINT NOT NULL DEFAULT 0,
      errors BIGINT NOT NULL DEFAULT 0,
      orphans BIGINT,
      error TEXT
    )`);
  await client.query(`CREATE INDEX IF NOT EXISTS runs_complete ON ${runs} (scope, kind, complete, seq)`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${runErrors} (
      run_id TEXT NOT NULL,
      idx BIGINT NOT NULL,
      external_id TEXT NOT NULL,
      store_id TEXT,
      code TEXT NOT NULL,
      message TEXT NOT NULL,
      PRIMARY KEY (run_id, idx)
    )`);
  await client.query(`
    CREATE TABLE IF NOT EXISTS ${leases} (
      scope TEXT NOT NULL,
      kind TEXT NOT NULL,
      run_id TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL,
      PRIMARY KEY (scope, kind)
    )`);
  // Added after the first version: a database written by it gains them here.
  await client.query(`ALTER TABLE ${items} ADD COLUMN IF NOT EXISTS in_flight BOOLEAN NOT NULL DEFAULT false`);
  await client.query(`ALTER TABLE ${leases} ADD COLUMN IF NOT EXISTS host TEXT`);
  await client.query(`ALTER TABLE ${leases} ADD COLUMN IF NOT EXISTS pid INTEGER`);
  // The fields of the stock pairs an acknowledged item wrote, by store (see pair-fields.ts).
  await client.query(`ALTER TABLE ${items} ADD COLUMN IF NOT EXISTS pair_fields JSONB`);
  await client.query(`CREATE INDEX IF NOT EXISTS runs_scope ON ${runs} (scope, seq)`);
}
