import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { entry, LEASE, T0, WAIT } from '../../../src/inbox/conformance-entries.ts';
import type { InboxStore } from '../../../src/inbox/store.ts';
import { usePostgres } from '../support/postgres.ts';

// A Postgres claim runs as a few statements that each commit (the leases first, then the due
// tenants' bookkeeping). A statement that fails after leases were taken (a connection the restarted
// server dropped, here a real error of the server) must hand those entries to the worker, not leave
// them leased to nobody until the lease runs out.
const postgres = usePostgres();
let n = 0;
const opened: { store: InboxStore; admin: pg.Client }[] = [];

async function open(): Promise<{ store: InboxStore; admin: pg.Client; schema: string }> {
  const schema = `claim_faults_${process.pid}_${++n}`;
  const store = postgresStore({ connectionString: postgres.current.url, schema });
  await store.migrate();
  const admin = new pg.Client({ connectionString: postgres.current.url });
  await admin.connect();
  opened.push({ store, admin });
  return { store, admin, schema };
}

afterEach(async () => {
  for (const { store, admin } of opened.splice(0)) {
    await store.close();
    await admin.end();
  }
});

const claim = (store: InboxStore, now: number) => store.claim({ workerId: 'w', now, leaseMs: LEASE, limit: 4, orderWaitMs: WAIT });

it('returns the entries it leased when the due tenants cannot be marked afterwards', async () => {
  const { store, admin, schema } = await open();
  const stored = entry({ tenant: 'loja-a' });
  await store.insert(stored);
  await admin.query(`DROP FUNCTION "${schema}".inbox_due_refresh(text[], bigint)`);
  expect((await claim(store, T0)).map((each) => each.id)).toEqual([stored.deliveryId]);
});

it('returns the expired leases it took when the walk over due tenants fails', async () => {
  const { store, admin, schema } = await open();
  const stored = entry({ tenant: 'loja-a' });
  await store.insert(stored);
  expect((await claim(store, T0)).map((each) => each.id)).toEqual([stored.deliveryId]);
  // The worker that held it died; its lease runs out, and the walk now fails.
  await admin.query(`ALTER TABLE "${schema}".inbox_due_tenants RENAME TO inbox_due_tenants_gone`);
  expect((await claim(store, T0 + LEASE + 1)).map((each) => each.id)).toEqual([stored.deliveryId]);
});

it('still reports a failure that leased nothing', async () => {
  const { store, admin, schema } = await open();
  await store.insert(entry({ tenant: 'loja-a' }));
  await admin.query(`ALTER TABLE "${schema}".inbox_due_tenants RENAME TO inbox_due_tenants_gone`);
  await expect(claim(store, T0)).rejects.toThrow(/inbox_due_tenants/);
});
