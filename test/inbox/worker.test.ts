import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createInbox, defaultRetryDelayMs, type Inbox, type InboxEntry, type InboxOptions, type InboxStore, type InboxWorker, type StartWorkerOptions } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import type { WebhookEvent } from 'integration-sdk/webhooks';
import { deliveryRequest, manualClock, ORDER, orderCreated, SECRET, statusChanged } from './support/inbox-fixture.ts';
import { tempDir } from './support/temp-dir.ts';
import { deferred } from '../webhooks/support/deliveries.ts';

const disposers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

function setup(retention?: { days?: number }, extra: Partial<InboxOptions> = {}) {
  const { clock, manual } = manualClock();
  const dir = tempDir('inbox-worker');
  const path = `${dir.path}/inbox.db`;
  const open = () => createInbox({ secret: SECRET, store: sqliteStore({ path }), clock, random: () => 0.5, retention, ...extra });
  const inbox = open();
  const others: Inbox[] = [];
  disposers.push(async () => {
    await inbox.close();
    for (const other of others) await other.close();
    dir.remove();
  });
  const deliver = async (payload: Parameters<typeof deliveryRequest>[0], deliveryId?: string) => {
    const response = await inbox.handler(deliveryRequest(payload, { nowMs: manual.now(), deliveryId }));
    expect(response.status).toBe(200);
  };
  const start = (options: StartWorkerOptions, on: Inbox = inbox): InboxWorker => {
    const worker = on.startWorker({ pollMs: 100, ...options });
    disposers.push(async () => {
      let stopped = false;
      const stopping = worker.stop({ graceMs: 0 }).then(() => (stopped = true));
      // Past the wait for handlers that ignore their signal.
      while (!stopped) {
        manual.advance(1_000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await stopping;
    });
    return worker;
  };
  /** Another inbox on the same file: another process, as far as the store can tell. */
  const another = () => {
    const other = open();
    others.push(other);
    return other;
  };
  /**
   * Waits for an assertion that needs a worker poll after the clock was advanced. The worker may set
   * its next poll just after the advance (it was busy with what the advance made due), and a manual
   * clock never reaches it: each try moves the clock on by one poll.
   */
  const afterPoll = (assertion: () => unknown) =>
    vi.waitFor(async () => {
      manual.advance(100);
      await assertion();
    }, { timeout: 5_000, interval: 20 });
  return { inbox, path, manual, deliver, start, another, afterPoll };
}

const statusOf = async (inbox: Inbox, id: string) => (await inbox.entry(id))?.status;

describe('inbox.startWorker', () => {
  it('runs each handler with the parsed event and its context, marks it done, and marks events without a handler done', async () => {
    const { inbox, deliver, start } = setup();
    const calls: Array<{ event: WebhookEvent; deliveryId: string; attempt: number }> = [];
    start({ handlers: { 'order.created': async (event, ctx) => void calls.push({ event, deliveryId: ctx.deliveryId, attempt: ctx.attempt }) } });
    await deliver(orderCreated('11111111-0000-4000-8000-000000000001'), 'f1f1f1f1-0000-4000-8000-000000000001');
    await deliver({ event: 'stock.changed', data: { external_id: 'SKU-1' } }, 'f1f1f1f1-0000-4000-8000-000000000002');
    await deliver({ event: 'webhook.test', data: { webhook_id: 'w1', message: 'hello' } }, 'f1f1f1f1-0000-4000-8000-000000000003');
    await vi.waitFor(async () => expect((await inbox.stats()).done).toBe(3));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ deliveryId: 'f1f1f1f1-0000-4000-8000-000000000001', attempt: 1 });
    expect(calls[0]!.event).toMatchObject({ event: 'order.created', data: { order_id: '11111111-0000-4000-8000-000000000001' } });
  });

  it('keeps a failing entry pending with its error and backoff, retries it, then makes it dead after maxAttempts; retry() brings it back', async () => {
    const { inbox, manual, deliver, start, afterPoll } = setup();
    const id = 'f2f2f2f2-0000-4000-8000-000000000001';
    let fail = true;
    const attempts: number[] = [];
    const errors: Array<{ error: unknown; entry: InboxEntry | undefined }> = [];
    start({
      handlers: {
        'order.created': async (_event, ctx) => {
          attempts.push(ctx.attempt);
          if (fail) throw new Error('ERP unavailable');
        },
      },
      maxAttempts: 3,
      retryDelayMs: (attempt) => attempt * 10_000,
      onError: (error, entry) => errors.push({ error, entry }),
    });
    const receivedAt = manual.now();
    await deliver(orderCreated(), id);
    await vi.waitFor(async () => expect((await inbox.entry(id))?.attempts).toBe(1));
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('pending'));
    expect(await inbox.entry(id)).toMatchObject({ lastError: 'Error: ERP unavailable', nextAttemptAt: receivedAt + 10_000 });
    manual.advance(9_900);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(attempts).toEqual([1]);
    manual.advance(200);
    await afterPoll(() => expect(attempts).toEqual([1, 2]));
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('pending'));
    manual.advance(20_100);
    await afterPoll(async () => expect(await statusOf(inbox, id)).toBe('dead'));
    expect(attempts).toEqual([1, 2, 3]);
    const dead = [];
    for await (const entry of inbox.entries({ status: 'dead' })) dead.push(entry);
    expect(dead).toMatchObject([{ id, attempts: 3, lastError: 'Error: ERP unavailable' }]);
    expect(JSON.stringify(dead)).not.toContain('98765');
    expect(errors.every(({ entry }) => entry === undefined || !('payload' in entry))).toBe(true);

    fail = false;
    expect(await inbox.retry(id)).toBe(true);
    manual.advance(100);
    await afterPoll(async () => expect(await statusOf(inbox, id)).toBe('done'));
    expect(attempts).toEqual([1, 2, 3, 1]);
  });

  it('keeps trying when the store cannot be reached as it starts, and works once it can', async () => {
    const { clock, manual } = manualClock();
    const dir = tempDir('inbox-worker-down');
    const real = sqliteStore({ path: `${dir.path}/inbox.db` });
    let down = true;
    // A database that is down when the process starts (a deploy racing a Postgres restart).
    const store: InboxStore = {
      ...real,
      migrate: async () => {
        if (down) throw new Error('connect ECONNREFUSED');
        return real.migrate();
      },
    };
    const errors: unknown[] = [];
    const inbox = createInbox({ secret: SECRET, store, clock, random: () => 0.5 });
    const handled: string[] = [];
    const worker = inbox.startWorker({ handlers: { 'order.created': async (_event, ctx) => void handled.push(ctx.deliveryId) }, pollMs: 100, onError: (error) => errors.push(error) });
    disposers.push(async () => {
      await worker.stop({ graceMs: 0 });
      await inbox.close();
      dir.remove();
    });
    await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0));
    down = false;
    const id = 'fafafafa-0000-4000-8000-000000000001';
    expect((await inbox.handler(deliveryRequest(orderCreated(), { nowMs: manual.now(), deliveryId: id }))).status).toBe(200);
    await vi.waitFor(() => {
      manual.advance(100);
      expect(handled).toEqual([id]);
    });
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('done'));
  });

  it('backs off 1 s doubling to 1 h by default, with ±20 % jitter from the random seam', () => {
    expect([1, 2, 3, 4].map((attempt) => defaultRetryDelayMs(attempt, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
    expect(defaultRetryDelayMs(13, () => 0.5)).toBe(3_600_000);
    expect(defaultRetryDelayMs(40, () => 0.5)).toBe(3_600_000);
    expect(defaultRetryDelayMs(1, () => 0)).toBe(800);
    expect(defaultRetryDelayMs(1, () => 0.999999)).toBe(1200);
  });

  it('handles a status change that arrived first only after its order.created, and ctx.order() reads the stored order', async () => {
    const { inbox, deliver, start } = setup();
    const orderId = '22222222-0000-4000-8000-000000000001';
    const seen: string[] = [];
    const orders: unknown[] = [];
    start({
      handlers: {
        'order.created': async (event) => void seen.push(event.event),
        'order.status_changed': async (event, ctx) => {
          seen.push(event.event);
          orders.push(await ctx.order());
        },
      },
      concurrency: 4,
    });
    await deliver(statusChanged(orderId), 'f3f3f3f3-0000-4000-8000-000000000001');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen).toEqual([]);
    await deliver(orderCreated(orderId), 'f3f3f3f3-0000-4000-8000-000000000002');
    await vi.waitFor(async () => expect((await inbox.stats()).done).toBe(2));
    expect(seen).toEqual(['order.created', 'order.status_changed']);
    expect(orders).toMatchObject([{ order_id: orderId, display_number: ORDER.display_number }]);
  });

  it('runs a lone status change after orderWaitMs, and ctx.order() reads the order through the client', async () => {
    const { inbox, manual, deliver, start, afterPoll } = setup();
    const orderId = '33333333-0000-4000-8000-000000000001';
    const read: string[] = [];
    const client = { orders: { get: async (id: string) => (read.push(id), { ...ORDER, order_id: id }) as never } };
    const orders: unknown[] = [];
    start({ handlers: { 'order.status_changed': async (_event, ctx) => void orders.push(await ctx.order()) }, client, orderWaitMs: 60_000 });
    await deliver(statusChanged(orderId), 'f4f4f4f4-0000-4000-8000-000000000001');
    manual.advance(59_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(orders).toEqual([]);
    manual.advance(1_100);
    await afterPoll(() => expect(orders).toHaveLength(1));
    expect(read).toEqual([orderId]);
    expect(orders[0]).toMatchObject({ order_id: orderId });
    await vi.waitFor(async () => expect(await statusOf(inbox, 'f4f4f4f4-0000-4000-8000-000000000001')).toBe('done'));
  });

  it('runs different orders in parallel up to concurrency, and one order one event at a time', async () => {
    const { inbox, deliver, start } = setup();
    let running = 0;
    let most = 0;
    const release = deferred();
    const perOrder = new Map<string, number>();
    let overlapWithinOrder = false;
    const handler = async (event: WebhookEvent) => {
      const orderId = (event.data as { order_id: string }).order_id;
      perOrder.set(orderId, (perOrder.get(orderId) ?? 0) + 1);
      if (perOrder.get(orderId)! > 1) overlapWithinOrder = true;
      running += 1;
      most = Math.max(most, running);
      await release.promise;
      running -= 1;
      perOrder.set(orderId, perOrder.get(orderId)! - 1);
    };
    start({ handlers: { 'order.created': handler, 'order.status_changed': handler }, concurrency: 3 });
    for (let i = 1; i <= 5; i += 1) {
      const orderId = `44444444-0000-4000-8000-00000000000${i}`;
      await deliver(orderCreated(orderId));
      await deliver(statusChanged(orderId));
    }
    await vi.waitFor(() => expect(running).toBe(3));
    release.resolve();
    await vi.waitFor(async () => expect((await inbox.stats()).done).toBe(10));
    expect(most).toBe(3);
    expect(overlapWithinOrder).toBe(false);
  });

  it('extends the lease while a handler runs, so another worker does not take the entry', async () => {
    const { inbox, manual, deliver, start, another } = setup();
    const release = deferred();
    const runs: string[] = [];
    start({ handlers: { 'order.created': async () => (runs.push('first'), release.promise) }, leaseMs: 30_000 });
    await deliver(orderCreated(), 'f5f5f5f5-0000-4000-8000-000000000001');
    await vi.waitFor(() => expect(runs).toEqual(['first']));
    start({ handlers: { 'order.created': async () => void runs.push('second') }, leaseMs: 30_000 }, another());
    for (let step = 0; step < 10; step += 1) {
      manual.advance(10_000); // the lease is extended every leaseMs / 3
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(runs).toEqual(['first']);
    release.resolve();
    await vi.waitFor(async () => expect(await statusOf(inbox, 'f5f5f5f5-0000-4000-8000-000000000001')).toBe('done'));
    expect(runs).toEqual(['first']);
  });

  it('takes over an entry whose worker died, once its lease expires, as attempt 2', async () => {
    const { inbox, path, manual, deliver, start, afterPoll } = setup();
    const id = 'f6f6f6f6-0000-4000-8000-000000000001';
    await deliver(orderCreated(), id);
    // A worker in another process claims it and is killed: nothing extends or finishes its lease.
    const dead = sqliteStore({ path });
    disposers.push(() => dead.close());
    expect(await dead.claim({ workerId: 'killed', now: manual.now(), leaseMs: 30_000, limit: 1, orderWaitMs: 0 })).toHaveLength(1);
    const attempts: number[] = [];
    start({ handlers: { 'order.created': async (_event, ctx) => void attempts.push(ctx.attempt) } });
    manual.advance(29_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(attempts).toEqual([]);
    manual.advance(1_100);
    await afterPoll(() => expect(attempts).toEqual([2]));
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('done'));
  });

  it("aborts a handler's signal when its worker lost the lease (paused past it, and another took the entry)", async () => {
    const { inbox, path, manual, deliver, start, afterPoll } = setup();
    const id = 'fafafafa-0000-4000-8000-000000000001';
    const started = deferred<AbortSignal>();
    start({ handlers: { 'order.created': (_event, ctx) => (started.resolve(ctx.signal), new Promise(() => {})) }, leaseMs: 30_000 });
    await deliver(orderCreated(), id);
    const signal = await started.promise;
    const other = sqliteStore({ path });
    disposers.push(() => other.close());
    expect(await other.claim({ workerId: 'other', now: manual.now() + 31_000, leaseMs: 30_000, limit: 1, orderWaitMs: 0 })).toHaveLength(1);
    manual.advance(10_000); // the first worker's next extension finds the lease gone
    await afterPoll(() => expect(signal.aborted).toBe(true));
    expect(await statusOf(inbox, id)).toBe('processing');
  });

  it('stop() waits for handlers in flight, and aborts their signal after the grace period', async () => {
    const { inbox, manual, deliver, start } = setup();
    const started = deferred<AbortSignal>();
    const worker = start({
      handlers: {
        'order.created': (_event, ctx) =>
          new Promise((_resolve, reject) => {
            started.resolve(ctx.signal);
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
          }),
      },
    });
    await deliver(orderCreated(), 'f7f7f7f7-0000-4000-8000-000000000001');
    const signal = await started.promise;
    let stopped = false;
    const stopping = worker.stop({ graceMs: 5_000 }).then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    manual.advance(5_000);
    await stopping;
    expect(signal.aborted).toBe(true);
    // Not done: it runs again on the next worker.
    expect(await statusOf(inbox, 'f7f7f7f7-0000-4000-8000-000000000001')).toBe('pending');
  });

  it("hands an entry whose body the schema does not accept to its handler with ctx.schemaIssues (invalidPayload: 'handler'), and a dead one once retried", async () => {
    const { deliver, start } = setup(undefined, { invalidPayload: 'handler' });
    const seen: Array<{ id: string; issues: readonly string[] | null; email: unknown }> = [];
    start({ handlers: { 'order.created': async (event, ctx) => void seen.push({ id: ctx.deliveryId, issues: ctx.schemaIssues, email: event.data.customer.email }) } });
    const odd = { ...ORDER, customer: { ...(ORDER.customer as object), email: null } };
    await deliver({ event: 'order.created', data: odd as never }, 'fbfbfbfb-0000-4000-8000-000000000001');
    await deliver(orderCreated('11111111-0000-4000-8000-0000000000fb'), 'fbfbfbfb-0000-4000-8000-000000000002');
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual(
      expect.arrayContaining([
        { id: 'fbfbfbfb-0000-4000-8000-000000000001', issues: ['data.customer.email'], email: null },
        { id: 'fbfbfbfb-0000-4000-8000-000000000002', issues: null, email: 'joao@example.com' },
      ]),
    );
    // The default inbox on the same file sends such an entry to dead; retry() hands it over, marked.
    const strict = setup();
    const handled: Array<readonly string[] | null> = [];
    strict.start({ handlers: { 'order.created': async (_event, ctx) => void handled.push(ctx.schemaIssues) } });
    await strict.deliver({ event: 'order.created', data: odd as never }, 'fbfbfbfb-0000-4000-8000-000000000003');
    expect(await statusOf(strict.inbox, 'fbfbfbfb-0000-4000-8000-000000000003')).toBe('dead');
    expect(await strict.inbox.retry('fbfbfbfb-0000-4000-8000-000000000003')).toBe(true);
    await strict.afterPoll(() => expect(handled).toEqual([['data.customer.email']]));
  });

  it('keeps no personal data in lastError: a handler error quoting the payload is cut and scrubbed before it is stored', async () => {
    const { inbox, deliver, start } = setup();
    const id = 'fafafafa-0000-4000-8000-000000000001';
    start({
      handlers: {
        'order.created': async (event) => {
          const { customer } = event.data;
          throw new Error(`ERP refused ${customer.name} <${customer.email}> tel ${customer.phone}, also reachable at maria@example.org or (11) 91234-5678: ${JSON.stringify(event.data)}`);
        },
      },
      maxAttempts: 1,
    });
    await deliver(orderCreated(), id);
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('dead'));
    const dead = [];
    for await (const entry of inbox.entries({ status: 'dead' })) dead.push(entry);
    const lastError = dead[0]!.lastError!;
    expect(lastError).toMatch(/^Error: ERP refused \[redacted\] <\[redacted\]> tel \[redacted\], also reachable at \[email\] or \[phone\]/);
    expect(lastError.length).toBeLessThanOrEqual(300);
    for (const personal of ['João', 'joao@example.com', '98765', 'Paulista', 'Bela Vista', 'maria@', '91234']) expect(lastError).not.toContain(personal);
    // Ids stay readable: they are what an operator looks for.
    expect(lastError).toContain(ORDER.order_id as string);
  });

  it("keeps no payload excerpt of a JSON parse error in lastError: V8's quoted excerpts are cut out", async () => {
    const { inbox, deliver, start } = setup();
    const name = 'Mariana Zenaide da Silva';
    const notes = 'entregar na portaria, falar com Mariana Zenaide';
    const order = { ...ORDER, customer: { ...(ORDER.customer as object), name }, items: [{ ...(ORDER.items as object[])[0], notes }] };
    const [first, second] = ['fcfcfcfc-0000-4000-8000-000000000001', 'fcfcfcfc-0000-4000-8000-000000000002'];
    start({
      handlers: {
        'order.created': async (event, ctx) => {
          // A handler that takes free text for JSON: V8 quotes the start of the text, or the text around the error.
          if (ctx.deliveryId === first) JSON.parse(event.data.customer.name);
          else JSON.parse(`{"id": 1, "notes": ${event.data.items[0]!.notes}}`);
        },
      },
      maxAttempts: 1,
    });
    await deliver({ event: 'order.created', data: { ...order, order_id: '11111111-0000-4000-8000-0000000000fc' } } as never, first);
    await deliver({ event: 'order.created', data: { ...order, order_id: '11111111-0000-4000-8000-0000000000fd' } } as never, second);
    await vi.waitFor(async () => expect((await inbox.stats()).dead).toBe(2));
    const [byName, byNotes] = [(await inbox.entry(first))!.lastError!, (await inbox.entry(second))!.lastError!];
    expect(byName).toBe("SyntaxError: Unexpected token 'M', [excerpt] is not valid JSON");
    expect(byNotes).toBe("SyntaxError: Unexpected token 'e', [excerpt] is not valid JSON");
    for (const text of [byName, byNotes]) for (const personal of ['Mariana', 'Zenaide', 'portaria', 'notes']) expect(text).not.toContain(personal);
  });

  it('aborts a handler that never settles after handlerTimeoutMs and counts a failed run, so the later events of its order run', async () => {
    const { inbox, manual, deliver, start, afterPoll } = setup();
    const orderId = '11111111-0000-4000-8000-0000000000f9';
    const created = 'f9f9f9f9-0000-4000-8000-000000000001';
    const changed = 'f9f9f9f9-0000-4000-8000-000000000002';
    const signals: AbortSignal[] = [];
    const statuses: string[] = [];
    start({
      handlers: {
        'order.created': (_event, ctx) => {
          signals.push(ctx.signal);
          return new Promise(() => {}); // never settles
        },
        'order.status_changed': async (event) => void statuses.push(event.data.status),
      },
      handlerTimeoutMs: 5_000,
      maxAttempts: 2,
      retryDelayMs: () => 1_000,
    });
    await deliver(orderCreated(orderId), created);
    await deliver(statusChanged(orderId), changed);
    await vi.waitFor(() => expect(signals).toHaveLength(1));
    manual.advance(5_000);
    await vi.waitFor(async () => expect(await inbox.entry(created)).toMatchObject({ status: 'pending', attempts: 1 }));
    expect(signals[0]!.aborted).toBe(true);
    expect((await inbox.entry(created))!.lastError).toContain('HandlerTimeoutError');
    manual.advance(1_000);
    await afterPoll(() => expect(signals).toHaveLength(2));
    manual.advance(5_000);
    await afterPoll(async () => expect(await statusOf(inbox, created)).toBe('dead'));
    await afterPoll(() => expect(statuses).toEqual(['cancelled']));
  });

  it('refuses a handlerTimeoutMs that is not a positive number of milliseconds (Infinity turns it off)', () => {
    const { inbox } = setup();
    expect(() => inbox.startWorker({ handlers: {}, handlerTimeoutMs: 0 })).toThrow(/handlerTimeoutMs/);
    expect(() => inbox.startWorker({ handlers: {}, handlerTimeoutMs: Number.NaN })).toThrow(/handlerTimeoutMs/);
  });

  it('deletes a done payload after retention.days, keeps its id 7 days for deduplication, then deletes it', async () => {
    const { inbox, manual, deliver, start, afterPoll } = setup({ days: 1 });
    const id = 'f8f8f8f8-0000-4000-8000-000000000001';
    start({ handlers: {} });
    await deliver(orderCreated(), id);
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('done'));
    manual.advance(86_400_000 + 11 * 60_000);
    await afterPoll(async () => expect((await inbox.entry(id))?.payload).toBe(null));
    expect((await inbox.handler(deliveryRequest(orderCreated(), { nowMs: manual.now(), deliveryId: id }))).status).toBe(200);
    expect((await inbox.entry(id))?.status).toBe('done');
    manual.advance(6 * 86_400_000 + 11 * 60_000);
    await afterPoll(async () => expect(await inbox.entry(id)).toBeUndefined());
  });

  it("purge({ status: 'done' }) keeps a fresh delivery id for 7 days, so a redelivery does not run the handler twice", async () => {
    const { inbox, manual, deliver, start } = setup();
    const id = 'f8f8f8f8-0000-4000-8000-000000000002';
    let runs = 0;
    start({ handlers: { 'order.created': async () => void (runs += 1) } });
    await deliver(orderCreated(), id);
    await vi.waitFor(async () => expect(await statusOf(inbox, id)).toBe('done'));
    manual.advance(1);
    expect(await inbox.purge({ status: 'done' })).toBe(1);
    expect(await inbox.entry(id)).toMatchObject({ status: 'done', payload: null });
    manual.advance(60_000);
    const again = await inbox.handler(deliveryRequest(orderCreated(), { nowMs: manual.now(), deliveryId: id }));
    expect(await again.text()).toBe('duplicate');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runs).toBe(1);
    expect(await inbox.purge({ status: 'done', olderThanDays: 1 })).toBe(0);
    manual.advance(7 * 86_400_000);
    expect(await inbox.purge({ status: 'done' })).toBe(1);
    expect(await inbox.entry(id)).toBeUndefined();
  });

  it('publishes each handled event on integration-sdk:inbox with its outcome and attempt, without the payload', async () => {
    const { inbox, manual, deliver, start, afterPoll } = setup();
    const seen: Array<Record<string, unknown>> = [];
    const subscriber = { asyncEnd: (context: unknown) => seen.push({ ...(context as Record<string, unknown>) }) };
    const channel = diagnostics.tracingChannel('integration-sdk:inbox');
    channel.subscribe(subscriber as never);
    disposers.push(() => channel.unsubscribe(subscriber as never));
    let calls = 0;
    start({
      handlers: {
        'order.created': async () => {
          calls += 1;
          if (calls === 1) throw new Error('first try fails');
        },
      },
      maxAttempts: 2,
      retryDelayMs: () => 1000,
    });
    await deliver(orderCreated(), 'f9f9f9f9-0000-4000-8000-000000000001');
    await vi.waitFor(async () => expect((await inbox.entry('f9f9f9f9-0000-4000-8000-000000000001'))?.status).toBe('pending'));
    manual.advance(1100);
    await afterPoll(async () => expect(await statusOf(inbox, 'f9f9f9f9-0000-4000-8000-000000000001')).toBe('done'));
    const handled = seen.filter((context) => context.kind === 'handled');
    expect(handled.map(({ outcome, attempt }) => `${String(outcome)}:${String(attempt)}`)).toEqual(['retry:1', 'done:2']);
    expect(JSON.stringify(seen)).not.toContain('98765');
  });
});
