// A table written by an earlier version (no order-reference columns): migrate() adds them and fills
// them from the payloads still there.
import pg from 'pg';
import { expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();
const ORDER = JSON.stringify({ event: 'order.created', data: { order_id: 'o-1', display_number: '501', external_order_id: 'MKT-9' } });

async function olderTable(schema: string, payloads: Array<string | null>): Promise<void> {
  const client = new pg.Client({ connectionString: postgres.current.url });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`CREATE TABLE "${schema}".inbox_entries (seq BIGSERIAL PRIMARY KEY, delivery_id TEXT NOT NULL UNIQUE, event TEXT NOT NULL, order_id TEXT,
    ts BIGINT NOT NULL, payload TEXT, known BOOLEAN NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
    received_at BIGINT NOT NULL, next_attempt_at BIGINT NOT NULL, lease_owner TEXT, lease_until BIGINT, finished_at BIGINT)`);
  for (const [index, payload] of payloads.entries()) {
    await client.query(
      `INSERT INTO "${schema}".inbox_entries (delivery_id, event, order_id, ts, payload, known, status, received_at, next_attempt_at) VALUES ($1, 'order.created', $2, 1, $3, true, 'done', $4, $4)`,
      [`d-${index + 1}`, `o-${index + 1}`, payload, 1000 * (index + 1)],
    );
  }
  await client.end();
}

it('adds display_number and external_order_id to an older table and fills them from the payloads still there', async () => {
  const schema = `old_${process.pid}`;
  await olderTable(schema, [ORDER, null]);
  const store = postgresStore({ connectionString: postgres.current.url, schema });
  try {
    await store.migrate();
    expect(await store.page!({ limit: 10, search: '#501' })).toMatchObject([{ id: 'd-1', displayNumber: '501', externalOrderId: 'MKT-9' }]);
    expect((await store.page!({ limit: 10 })).map((entry) => entry.id)).toEqual(['d-2', 'd-1']);
  } finally {
    await store.close();
  }
}, 60_000);

it('completes the migration when a stored payload does not parse (the fill is skipped)', async () => {
  const schema = `old_broken_${process.pid}`;
  await olderTable(schema, [ORDER, 'not json']);
  const store = postgresStore({ connectionString: postgres.current.url, schema });
  try {
    await store.migrate();
    expect((await store.page!({ limit: 10, search: 'o-1' })).map((entry) => entry.id)).toEqual(['d-1']);
  } finally {
    await store.close();
  }
}, 60_000);
