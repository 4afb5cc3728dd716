// An inbox for many merchants as the dashboard's tenant views are tested with: the sandbox's
// merchants connected as tenants, their orders delivered over a real socket and run by a worker,
// one tenant's ERP refusing its orders (dead entries), and one merchant's key revoked (key_invalid).
import { tenantsWorld, type TenantsWorld } from '../inbox/support/tenants-world.ts';
import { rejectionOf } from '../e2e/helpers.ts';
import { waitFor } from './support.ts';

export interface MerchantsSpec {
  /** The tenant ids, one per merchant of the sandbox. */
  ids: string[];
  /** How many orders each tenant gets. */
  orders: number[];
  /** The tenant whose orders die (each after one attempt). */
  failing: string;
  /** The tenant whose key the merchant revokes after its orders were received. */
  revoked: string;
}

/** The world, closed after the test; its worker stopped once every entry is done or dead. */
export async function merchantsInbox(spec: MerchantsSpec): Promise<TenantsWorld> {
  const world = await tenantsWorld({ merchants: spec.ids.length });
  for (const [index, id] of spec.ids.entries()) await world.tenants.connect(id, { apiKey: world.sandbox.merchants[index]!.keys[0]!.apiKey });
  for (const [index, count] of spec.orders.entries()) {
    for (let n = 0; n < count; n++) world.sandbox.createOrder({ store_id: world.sandbox.merchants[index]!.storeIds[0]! });
  }
  await world.sandbox.idle();
  const worker = world.inbox.startWorker({
    maxAttempts: 1,
    pollMs: 20,
    handlers: {
      'order.created': async (_event, ctx) => {
        if (ctx.tenant === spec.failing) throw new Error('ERP refused the order: store not mapped');
      },
      'webhook.test': async () => {},
    },
  });
  const dead = spec.orders[spec.ids.indexOf(spec.failing)]!;
  await waitFor(() => world.inbox.stats(), (stats) => stats.pending + stats.processing === 0 && stats.dead === dead);
  await worker.stop();
  world.sandbox.revokeKey(world.sandbox.merchants[spec.ids.indexOf(spec.revoked)]!.keys[0]!.apiKey);
  await rejectionOf(world.tenants.client(spec.revoked).health());
  return world;
}
