// close() right after an insert: the insert's wake-up (pg_notify) waits in the pool's queue for an
// idle client; a pool ended at that moment never answers it, so close() must let it go out first.
import { expect, it } from 'vitest';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

it('resolves close() called right after an insert', async () => {
  const store = postgresStore({ connectionString: postgres.current.url, schema: `close_${process.pid}` });
  await store.migrate();
  expect(await store.insert({ deliveryId: 'd-1', event: 'order.created', orderId: 'o-1', ts: 1, payload: '{"data":{}}', known: true, receivedAt: 1 })).toBe('stored');
  const closed = await Promise.race([store.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5000))]);
  expect(closed).toBe('closed');
}, 60_000);
