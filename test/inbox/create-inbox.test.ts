import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors/index.ts';
import { createInbox, type Inbox } from '../../src/inbox/index.ts';
import { sqliteStore } from '../../src/inbox/sqlite/index.ts';
import { signWebhook } from '../../src/webhooks/index.ts';
import { orderCreated, request, SECRET, statusChanged, tempDir } from './support.ts';

const now = () => Math.floor(Date.now() / 1000);
let dir: ReturnType<typeof tempDir>;
let inbox: Inbox;

beforeEach(() => {
  dir = tempDir();
  inbox = createInbox({ secret: SECRET, store: sqliteStore({ path: dir.path('inbox.db') }) });
});
afterEach(async () => {
  await inbox.close();
  dir.remove();
});

describe('receiving', () => {
  it('stores a verified delivery and answers 2xx; the same delivery again changes nothing', async () => {
    const delivery = orderCreated('o-1', now());
    expect((await inbox.handler(request(delivery))).status).toBe(200);
    const again = await inbox.handler(request(delivery));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('duplicate');
    expect(await inbox.stats()).toMatchObject({ received: 1, pending: 1 });
  });

  it('a forged or stale delivery is answered 400 and stores nothing', async () => {
    const forged = orderCreated('o-1', now());
    forged.headers['X-Service-Signature-256'] = `sha256=${'0'.repeat(64)}`;
    expect((await inbox.handler(request(forged))).status).toBe(400);
    expect((await inbox.handler(request(orderCreated('o-2', now() - 3_600)))).status).toBe(400);
    expect((await inbox.stats()).received).toBe(0);
  });

  it('a body over 1 MB is answered 413 and stores nothing', async () => {
    const { headers } = orderCreated('o-1', now());
    const response = await inbox.handler(new Request('http://inbox.test/', { method: 'POST', headers, body: 'x'.repeat(1_048_577) }));
    expect(response.status).toBe(413);
    expect((await inbox.stats()).received).toBe(0);
  });

  it('unknown event names are stored, and a worker without a handler for them marks them done', async () => {
    const unknown = signWebhook({ payload: { event: 'stock.changed', data: { sku: 'X' } }, secret: SECRET, deliveryId: 'd-unknown' });
    expect((await inbox.handler(request(unknown))).status).toBe(200);
    const worker = inbox.startWorker({ handlers: {}, pollMs: 10 });
    await expect.poll(async () => (await inbox.stats()).done, { timeout: 3_000 }).toBe(1);
    await worker.stop();
  });

  it('a store that cannot write answers 503, never 2xx without the row', async () => {
    const failing = createInbox({
      secret: SECRET,
      store: { ...sqliteStore({ path: dir.path('other.db') }), insert: () => Promise.reject(new Error('disk full')) },
    });
    expect((await failing.handler(request(orderCreated('o-1', now())))).status).toBe(503);
    const slow = createInbox({ secret: SECRET, storeTimeoutMs: 50, store: { ...sqliteStore({ path: dir.path('slow.db') }), insert: () => new Promise(() => {}) } });
    expect((await slow.handler(request(orderCreated('o-1', now())))).status).toBe(503);
  });

  it('a store locked by another connection\'s write transaction answers 503 within its busy timeout, then recovers', async () => {
    const path = dir.path('locked.db');
    const locked = createInbox({ secret: SECRET, store: sqliteStore({ path, busyTimeoutMs: 100 }) });
    const { DatabaseSync } = await import('node:sqlite');
    const other = new DatabaseSync(path);
    other.exec('BEGIN IMMEDIATE');
    expect((await locked.handler(request(orderCreated('o-1', now())))).status).toBe(503);
    other.exec('COMMIT');
    other.close();
    expect((await locked.handler(request(orderCreated('o-1', now())))).status).toBe(200);
    await locked.close();
  });

  it('rejects bad options at once', () => {
    expect(() => createInbox({ secret: SECRET, store: undefined as never })).toThrow(ConfigurationError);
    expect(() => createInbox({ secret: '', store: sqliteStore({ path: dir.path('x.db') }) })).toThrow(ConfigurationError);
  });
});

describe('working', () => {
  it('retries a failing handler with backoff, then done; listings never show the payload', async () => {
    await inbox.handler(request(orderCreated('o-1', now())));
    let calls = 0;
    const worker = inbox.startWorker({
      pollMs: 10,
      retryDelayMs: () => 0,
      handlers: {
        'order.created': async (event, ctx) => {
          calls += 1;
          expect(ctx.attempt).toBe(calls);
          expect((await ctx.order()).order_id).toBe('o-1');
          if (calls < 3) throw new Error(`ERP down (attempt ${calls})`);
          expect(event.data.order_id).toBe('o-1');
        },
      },
    });
    await expect.poll(async () => (await inbox.stats()).done, { timeout: 3_000 }).toBe(1);
    await worker.stop();
    expect(calls).toBe(3);
    const entries = [];
    for await (const entry of inbox.entries()) entries.push(entry);
    expect(entries).toMatchObject([{ deliveryId: 'd-created-o-1', status: 'done', attempts: 3, lastError: 'Error: ERP down (attempt 2)' }]);
    expect(JSON.stringify(entries)).not.toContain('João');
  });

  it('after maxAttempts the entry is dead: listed, retryable, never dropped', async () => {
    await inbox.handler(request(orderCreated('o-1', now())));
    const worker = inbox.startWorker({ pollMs: 10, retryDelayMs: () => 0, maxAttempts: 2, handlers: { 'order.created': () => Promise.reject(new Error('nope')) } });
    await expect.poll(async () => (await inbox.stats()).dead, { timeout: 3_000 }).toBe(1);
    await worker.stop();
    expect(await inbox.retryDead()).toBe(1);
    expect((await inbox.stats()).pending).toBe(1);
    const again = inbox.startWorker({ pollMs: 10, handlers: { 'order.created': () => {} } });
    await expect.poll(async () => (await inbox.stats()).done, { timeout: 3_000 }).toBe(1);
    await again.stop();
  });

  it('events of one order run one at a time in ts order; a status change waits for its order.created', async () => {
    const t = now();
    await inbox.handler(request(statusChanged('o-1', t + 2, 'delivered')));
    await inbox.handler(request(statusChanged('o-1', t + 1, 'dispatched')));
    const seen: string[] = [];
    let running = 0;
    const worker = inbox.startWorker({
      pollMs: 10,
      concurrency: 4,
      handlers: {
        'order.created': async () => void seen.push('created'),
        'order.status_changed': async (event) => {
          running += 1;
          expect(running).toBe(1);
          await new Promise((resolve) => setTimeout(resolve, 20));
          seen.push(event.data.status);
          running -= 1;
        },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen).toEqual([]); // waiting for order.created (orderWaitMs: 10 min)
    await inbox.handler(request(orderCreated('o-1', t)));
    await expect.poll(() => seen, { timeout: 3_000 }).toEqual(['created', 'dispatched', 'delivered']);
    await worker.stop();
  });

  it('a worker that dies mid-run leaves its lease to expire, and another worker takes the entry', async () => {
    await inbox.handler(request(orderCreated('o-1', now())));
    const store = sqliteStore({ path: dir.path('inbox.db') });
    const [claimed] = await store.claim({ now: Date.now(), workerId: 'dead-worker', leaseMs: 200, limit: 1, orderWaitMs: 0 });
    expect(claimed?.attempt).toBe(1);
    let ran = 0;
    const worker = inbox.startWorker({ pollMs: 10, handlers: { 'order.created': (_event, ctx) => void (ran = ctx.attempt) } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ran).toBe(0); // the lease still holds
    await expect.poll(() => ran, { timeout: 3_000 }).toBe(2);
    await worker.stop();
    await store.close();
  });
});
