import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient, ValidationError, WebhookLimitReachedError } from 'integration-sdk';
import { createSandbox } from 'integration-sdk/sandbox';
import { verifyWebhook } from 'integration-sdk/webhooks';

type Sandbox = Awaited<ReturnType<typeof createSandbox>>;

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, ms = 8_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sandbox deliveries: retry schedule scaled by timeScale', () => {
  let sandbox: Sandbox;
  let client: IntegrationClient;
  let receiver: Server;
  let url: string;
  let answer = 500;
  const hits: { at: number; headers: Record<string, unknown>; body: string }[] = [];

  beforeAll(async () => {
    sandbox = await createSandbox({ timeScale: 0.00005 }); // 60 s → 3 ms … 43200 s → 2.2 s
    client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      hits.push({ at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.statusCode = answer;
      if (answer >= 300 && answer < 400) res.setHeader('location', 'https://example.com');
      res.end();
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/h`;
  });
  afterAll(async () => {
    await sandbox.close();
    await new Promise((r) => receiver.close(r));
  });

  it('a failing receiver gets 6 attempts, same delivery id, new signatures, then dead; a success resets the counter', async () => {
    const endpoint = await client.webhooks.create({ url, events: ['order.created'] });
    answer = 302;
    sandbox.createOrder();
    const dead = await until(async () => {
      const [d] = await client.webhooks.deliveries(endpoint.id, { limit: 1 });
      return d?.status === 'dead' ? d : undefined;
    }, 20_000);
    expect(dead.attempt_count).toBe(6);
    expect(dead.response_status).toBe(302);
    expect(dead.last_error).toEqual(expect.any(String));
    expect(hits).toHaveLength(6);
    const ids = new Set(hits.map((h) => h.headers['x-service-delivery-id']));
    expect(ids.size).toBe(1);
    for (const hit of hits) expect(() => verifyWebhook(hit.body, hit.headers as never, endpoint.secret)).not.toThrow();
    // the gaps grow with the schedule 60, 300, 1800, 7200, 43200 (scaled)
    const gaps = hits.slice(1).map((h, i) => h.at - hits[i]!.at);
    expect(gaps[4]!).toBeGreaterThan(gaps[3]!);
    expect(gaps[3]!).toBeGreaterThan(gaps[1]!);
    expect((await client.webhooks.list()).find((w) => w.id === endpoint.id)?.consecutive_failures).toBe(6);

    answer = 200;
    const { delivery_id } = await client.webhooks.test(endpoint.id);
    await until(async () => ((await client.webhooks.deliveries(endpoint.id)).find((d) => d.id === delivery_id)?.status === 'delivered' ? true : undefined));
    expect((await client.webhooks.list()).find((w) => w.id === endpoint.id)?.consecutive_failures).toBe(0);
  }, 30_000);

  it('at most 5 endpoints; deliveries limit outside 1–100 is refused', async () => {
    const existing = (await client.webhooks.list()).length;
    for (let i = existing; i < 5; i++) await client.webhooks.create({ url, events: ['order.status_changed'] });
    await expect(client.webhooks.create({ url, events: ['order.created'] })).rejects.toBeInstanceOf(WebhookLimitReachedError);
    const [first] = await client.webhooks.list();
    const raw = await client.request({ method: 'GET', path: `/webhooks/${first!.id}/deliveries`, query: { limit: 500 } }).catch((e: unknown) => e);
    expect(raw).toBeInstanceOf(ValidationError);
  });

  it('more than 500 items is a whole-batch 400 VALIDATION_ERROR', async () => {
    const items = Array.from({ length: 501 }, (_, i) => ({ external_id: `BIG-${i}`, name: 'x', price: 1 }));
    await expect(client.request({ method: 'POST', path: '/products/bulk', body: { items } })).rejects.toBeInstanceOf(ValidationError);
  });
});
