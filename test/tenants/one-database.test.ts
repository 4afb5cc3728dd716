// tenants.md: "one database may hold all three". One SQLite file holds a merchant's registry entry,
// the inbox that receives its orders and the sync state of its catalog, each through its own store
// opened on the same path, and each reads back what it wrote after the others migrated and wrote.
import { expect, it } from 'vitest';
import { createSync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { collect } from '../inbox/support/collect.ts';
import { tenantsWorld } from '../inbox/support/tenants-world.ts';

it('one SQLite file holds the tenants, the inbox and the sync state, each working beside the others', async () => {
  const world = await tenantsWorld({ merchants: 1 });
  await world.tenants.connect('loja-a', { apiKey: world.sandbox.merchants[0]!.keys[0]!.apiKey });
  const sync = createSync({ client: world.tenants.client('loja-a'), state: sqliteSyncState({ path: world.path }) });
  const items = [{ external_id: 'SKU-1', name: 'Coffee 500g', price: 32.9 }];
  expect(await sync.catalog(items)).toMatchObject({ sent: 1, errors: 0 });

  const order = world.sandbox.createOrder({ store_id: world.sandbox.merchants[0]!.storeIds[0]! });
  await world.sandbox.idle();
  expect(await world.inbox.stats({ tenant: 'loja-a' })).toMatchObject({ received: 2 }); // the connect's test delivery, the order
  expect((await collect(world.inbox.entries({ tenant: 'loja-a' }))).map((entry) => entry.orderId)).toContain(order.order_id);
  expect((await world.tenants.get('loja-a'))?.status).toBe('active');
  // The sync state kept its fingerprint beside the others' tables: the same export sends nothing.
  expect(await sync.catalog(items)).toMatchObject({ sent: 0, unchanged: 1 });
  await sync.close();
});
