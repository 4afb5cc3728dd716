import { createServer } from 'node:http';
import { expect, test } from 'vitest';
import { createInbox } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { createSandbox } from 'integration-sdk/sandbox';
import { api } from '../../sandbox/helpers.ts';
import { deliveryRequest, orderCreated } from '../support/inbox-fixture.ts';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();

test.runIf(!process.env.INTEGRATION_TEST_PG_URL)(
  'answers 503 in bounded time while Postgres is stopped; every delivery the sandbox retried afterwards is stored and worked',
  async () => {
    const sandbox = await createSandbox({ rate: false, timeScale: 0.003 });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const registered = await api(sandbox)('POST', '/webhooks', { url: `http://127.0.0.1:${port}/webhooks`, events: ['order.created', 'order.status_changed'] });
    const { secret } = registered.body as { secret: string };
    const inbox = createInbox({ secret, store: postgresStore({ connectionString: postgres.current.url, schema: 'store_down' }), storeTimeoutMs: 2000 });
    server.on('request', inbox.handler.node);
    const handled: string[] = [];
    inbox.startWorker({ handlers: { 'order.created': async (_event, ctx) => void handled.push(ctx.deliveryId) }, pollMs: 200 });

    sandbox.createOrder();
    await sandbox.idle();
    expect((await inbox.stats()).received).toBe(1);

    await postgres.current.stop();
    const started = performance.now();
    const refused = await inbox.handler(deliveryRequest(orderCreated(), { nowMs: Date.now(), secret }));
    expect(refused.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(5000);
    for (let i = 0; i < 5; i += 1) sandbox.createOrder();
    // Let the sandbox meet the 503s before the database comes back.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const failedAttempts = sandbox.deliveries().filter((delivery) => delivery.attempt_count >= 1 && delivery.status !== 'delivered');
    expect(failedAttempts.length).toBeGreaterThan(0);
    await postgres.current.start();

    await sandbox.idle();
    const deliveries = sandbox.deliveries();
    expect(deliveries.filter((delivery) => delivery.status !== 'delivered')).toEqual([]);
    for (const delivery of deliveries) expect(await inbox.entry(delivery.id), delivery.id).toBeDefined();
    const ids = deliveries.map((delivery) => delivery.id).sort();
    await expect.poll(() => [...handled].sort(), { timeout: 15_000 }).toEqual(ids);
    await inbox.close();
    await sandbox.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  },
  60_000,
);
