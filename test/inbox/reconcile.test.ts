/**
 * inbox.reconcile against the sandbox over sockets, on both stores: the receiver really stopped
 * past the service's retry window (spec 6.4: 6 attempts in about 14 h 36 min) while orders change
 * status, then reconcile. Time is one injected manual clock shared by the sandbox (its retry
 * timers, timestamps and signatures) and the inbox (staleness, the worker's waits), so the window
 * passes in a few steps without sleeping; each step waits for the sandbox's attempts to finish.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntegrationClient, InvalidInputError } from 'integration-sdk';
import { createInbox, type Inbox, type InboxStore } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createSandbox, type DeliveryView, type Sandbox } from 'integration-sdk/sandbox';
import { manualClock } from './support/inbox-fixture.ts';
import { usePostgres } from './support/postgres.ts';
import { tempDir } from './support/temp-dir.ts';

const postgres = usePostgres();
const MINUTE = 60_000;
/** Spec 6.4: the waits after attempts 1 to 5. */
const RETRY_DELAYS_MS = [60, 300, 1800, 7200, 43200].map((seconds) => seconds * 1000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

let schemas = 0;
const stores: Array<[string, () => InboxStore]> = [
  [
    'sqliteStore',
    () => {
      const dir = tempDir('inbox-reconcile');
      cleanups.push(() => dir.remove());
      return sqliteStore({ path: `${dir.path}/inbox.db` });
    },
  ],
  ['postgresStore', () => postgresStore({ connectionString: postgres.current.url, schema: `reconcile_${process.pid}_${++schemas}` })],
];

/** A receiver on a fixed loopback port that can really be stopped (connections refused) and started again. */
async function receiver(listener: Parameters<typeof createServer>[1]) {
  let server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const stop = () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  const start = async () => {
    server = createServer(listener);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  };
  cleanups.push(() => (server.listening ? stop() : undefined));
  return { url: `http://127.0.0.1:${port}/webhooks`, stop, start };
}

interface Handled {
  event: string;
  orderId: string;
  status: string;
  source: string | undefined;
  deliveryId: string;
}

async function setUp(makeStore: () => InboxStore) {
  const { clock, manual } = manualClock();
  const sandbox: Sandbox = await createSandbox({ rate: false, clock: manual });
  cleanups.push(() => sandbox.close());
  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  let inbox: Inbox | undefined;
  // While set, deliveries reaching the receiver are handed to it instead (see holdDeliveries).
  let intercept: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const hook = await receiver((req, res) => (intercept ? intercept(req, res) : inbox!.handler.node(req, res)));
  const endpoint = await client.webhooks.create({ url: hook.url, events: ['order.created', 'order.status_changed'] });
  inbox = createInbox({ secret: endpoint.secret, store: makeStore(), clock });
  // A worker stopped in the middle of a claim sleeps one poll interval first: on the manual clock,
  // time has to move for close() to finish.
  cleanups.push(async () => {
    let closed = false;
    const closing = inbox!.close().finally(() => (closed = true));
    await vi.waitFor(() => {
      manual.advance(50);
      expect(closed).toBe(true);
    }, { timeout: 10_000, interval: 10 });
    await closing;
  });
  const handled: Handled[] = [];
  const record = async (event: { event: string; data: { order_id: string; status: string } }, ctx: { deliveryId: string }) => {
    handled.push({ event: event.event, orderId: event.data.order_id, status: event.data.status, source: (event as { source?: string }).source, deliveryId: ctx.deliveryId });
  };
  inbox.startWorker({ handlers: { 'order.created': record, 'order.status_changed': record }, concurrency: 4, pollMs: 50 });

  /** Waits until the worker has nothing left to run, moving the clock one poll interval at a time so that its polls come. */
  const drained = () => expect.poll(async () => {
    manual.advance(50);
    const stats = await inbox!.stats();
    return stats.pending + stats.processing;
  }, { timeout: 15_000 }).toBe(0);
  /** Moves time through the rest of the retry schedule, waiting for each attempt to finish: afterwards every one of `ids` is dead. */
  const outlastRetries = async (ids: string[]) => {
    for (const [index, delay] of RETRY_DELAYS_MS.entries()) {
      // Attempt index + 1 has failed (its retry timer is set) before time moves on.
      await Promise.all(ids.map((id) => sandbox.waitForDelivery(id, (d) => d.status === 'retrying' && d.attempt_count === index + 1)));
      manual.advance(delay);
    }
    for (const id of ids) expect((await sandbox.waitForDelivery(id)).status).toBe('dead');
  };
  const lastDelivery = (event: string): DeliveryView => sandbox.deliveries({ event })[0]!;
  /**
   * From now on the receiver holds each delivery it gets, by order id and status, until the test
   * lands it (stored by the inbox; resolves once the inbox answered).
   */
  const holdDeliveries = () => {
    const held = new Map<string, { arrived: Promise<() => Promise<number>>; arrive: (land: () => Promise<number>) => void }>();
    const slot = (key: string) => {
      let found = held.get(key);
      if (!found) {
        let arrive!: (land: () => Promise<number>) => void;
        const arrived = new Promise<() => Promise<number>>((resolve) => (arrive = resolve));
        held.set(key, (found = { arrived, arrive }));
      }
      return found;
    };
    intercept = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const { data } = JSON.parse(body.toString()) as { data: { order_id: string; status: string } };
        const headers = Object.fromEntries(Object.entries(req.headers).filter((pair): pair is [string, string] => typeof pair[1] === 'string'));
        slot(`${data.order_id} ${data.status}`).arrive(async () => {
          const answer = await inbox!.handler(new Request(hook.url, { method: 'POST', headers, body }));
          res.writeHead(answer.status).end(await answer.text());
          return answer.status;
        });
      });
    };
    /** Lands the held delivery of that change once it has reached the receiver; the inbox's answer status. */
    return async (orderId: string, status: string) => (await slot(`${orderId} ${status}`).arrived)();
  };
  return { clock, manual, sandbox, client, hook, endpoint, inbox, handled, drained, outlastRetries, lastDelivery, holdDeliveries };
}

describe.each(stores)('inbox.reconcile on %s, the sandbox over sockets', (_name, makeStore) => {
  it('recovers every status change and order.created the webhooks missed, once each, in the order\'s turn; lists the dead deliveries in missed', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual, handled } = t;
    const [a, b, c, e] = [0, 1, 2, 3].map(() => sandbox.createOrder());
    await sandbox.idle();
    await t.drained();
    expect(handled.map((each) => each.event)).toEqual(Array(4).fill('order.created'));

    // The receiver goes down for longer than the retry window while orders move on.
    await t.hook.stop();
    sandbox.setOrderStatus(a!.order_id, 'preparing');
    sandbox.setOrderStatus(b!.order_id, 'preparing');
    sandbox.setOrderStatus(b!.order_id, 'dispatched');
    sandbox.setOrderStatus(c!.order_id, 'cancelled');
    const d = sandbox.createOrder();
    const lost = sandbox.deliveries().filter((delivery) => delivery.status !== 'delivered').map((delivery) => delivery.id);
    expect(lost).toHaveLength(5);
    await t.outlastRetries(lost);

    // Back up: D is now known only from a status change (its order.created died).
    await t.hook.start();
    sandbox.setOrderStatus(d.order_id, 'preparing');
    await sandbox.idle();
    manual.advance(61 * MINUTE); // past orderWaitMs: D's change runs without its order.created; and every order is stale
    await t.drained();
    // Down again just as E changes: that delivery is still retrying when reconcile runs.
    await t.hook.stop();
    sandbox.setOrderStatus(e!.order_id, 'dispatched');
    const retrying = await sandbox.waitForDelivery(t.lastDelivery('order.status_changed').id, (delivery) => delivery.status === 'retrying');
    const before = handled.length;

    const report = await t.inbox.reconcile({ client: t.client });
    expect(report).toMatchObject({ ordersChecked: 5, statusChanges: 4, createdRecovered: 1, notFound: 0, endpointIds: [t.endpoint.id], endpointsGuessed: true, otherEndpoints: [] });
    expect(report.missedUnavailable).toBeUndefined();
    // Every delivery that died, and the one still retrying, never reached the inbox: all new. The
    // status changes are recovered (every order was read back since); D's order.created stays open.
    const createdOfD = sandbox.deliveries({ event: 'order.created' }).find((delivery) => lost.includes(delivery.id))!.id;
    expect([...report.newMissed].sort()).toEqual([...lost, retrying.id].sort());
    expect(report.missed.map((missed) => missed.deliveryId)).toEqual([createdOfD]);
    expect(report.recovered.map((missed) => missed.deliveryId).sort()).toEqual([...lost, retrying.id].filter((id) => id !== createdOfD).sort());
    expect(report.advice.join(' ')).toMatch(/order\.created delivery never arrived .*Look for orders created at that time in the platform.s dashboard/);
    for (const missed of [...report.missed, ...report.recovered]) {
      const delivery = sandbox.deliveries().find((each) => each.id === missed.deliveryId)!;
      expect(missed).toMatchObject({
        deliveryId: delivery.id, event: delivery.event, status: delivery.status, endpointId: t.endpoint.id, lastError: delivery.last_error,
        createdAt: delivery.created_at, attemptCount: delivery.attempt_count,
        givesUpAt: delivery.status === 'retrying' ? new Date(Date.parse(delivery.next_attempt_at!) + (300 + 1800 + 7200 + 43200) * 1000).toISOString() : null,
      });
      expect(missed.lastError).toEqual(expect.any(String));
    }
    expect((await t.inbox.stats()).missed).toBe(1);

    await t.drained();
    const recovered = handled.slice(before);
    const key = (each: Handled) => `${each.event} ${each.orderId} ${each.status} ${each.source ?? 'webhook'}`;
    expect(recovered.map(key).sort()).toEqual(
      [
        `order.status_changed ${a!.order_id} preparing reconcile`,
        `order.status_changed ${b!.order_id} dispatched reconcile`,
        `order.status_changed ${c!.order_id} cancelled reconcile`,
        `order.status_changed ${e!.order_id} dispatched reconcile`,
        `order.created ${d.order_id} preparing reconcile`,
      ].sort(),
    );
    // The synthetic change says where the order was and where it is now.
    const changeOfB = await t.inbox.entry(recovered.find((each) => each.orderId === b!.order_id)!.deliveryId);
    expect(JSON.parse(changeOfB!.payload!)).toMatchObject({ event: 'order.status_changed', source: 'reconcile', data: { order_id: b!.order_id, previous_status: 'confirmed', status: 'dispatched' } });
    // In each order's turn: after everything the order had before.
    for (const order of [a!, b!, c!, e!]) {
      expect(handled.filter((each) => each.orderId === order.order_id).map((each) => `${each.event} ${each.status}`)).toEqual(['order.created confirmed', `order.status_changed ${order.order_id === a!.order_id ? 'preparing' : order.order_id === c!.order_id ? 'cancelled' : 'dispatched'}`]);
    }

    // The late real delivery of E's change arrives after all: stored, never handled again.
    await t.hook.start();
    manual.advance(RETRY_DELAYS_MS[0]!);
    expect((await sandbox.waitForDelivery(retrying.id)).status).toBe('delivered');
    expect(await t.inbox.entry(retrying.id)).toMatchObject({ status: 'done', attempts: 0 });
    await t.drained();
    expect(handled.length).toBe(before + 5);
    expect((await t.inbox.stats()).missed).toBe(1);

    // A second reconcile, once every order is stale again, reads the four not final (C is cancelled)
    // and finds nothing new; D's order.created stays open until someone acknowledges it.
    manual.advance(61 * MINUTE);
    const ranAt = manual.now();
    const second = await t.inbox.reconcile({ client: t.client });
    expect(second).toMatchObject({ ordersChecked: 4, statusChanges: 0, createdRecovered: 0, notFound: 0, newMissed: [], recovered: [] });
    expect(second.missed.map((missed) => missed.deliveryId)).toEqual([createdOfD]);
    await t.drained();
    expect(handled.length).toBe(before + 5);
    expect(await t.inbox.lastReconcile()).toEqual({ ranAt, missed: second.missed });
  });

  it('handles each status change once when its real delivery lands between reconcile\'s read of the order and its insert, or after it (24 orders)', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual, handled } = t;
    const orders = Array.from({ length: 24 }, () => sandbox.createOrder());
    await sandbox.idle();
    await t.drained();
    await t.hook.stop();
    for (const order of orders) sandbox.setOrderStatus(order.order_id, 'preparing');
    const changes = sandbox.deliveries({ event: 'order.status_changed' }).map((delivery) => delivery.id);
    await Promise.all(changes.map((id) => sandbox.waitForDelivery(id, (d) => d.status === 'retrying')));
    // The receiver is back and the retries reach it; it holds each one until the test lands it.
    const land = t.holdDeliveries();
    await t.hook.start();
    manual.advance(RETRY_DELAYS_MS[0]!);
    const racing = orders.filter((_, index) => index % 2 === 0).map((order) => order.order_id);
    const client = {
      ...t.client,
      orders: {
        get: async (id: string) => {
          const order = await t.client.orders.get(id);
          // Reconcile has read the order (preparing) and not yet stored what it found: the real delivery lands now.
          if (racing.includes(id)) expect(await land(id, 'preparing')).toBe(200);
          return order;
        },
      },
    };
    const report = await t.inbox.reconcile({ client, staleAfterMinutes: 0 });
    expect(report.ordersChecked).toBe(24);
    // The others land after reconcile stored their change.
    for (const order of orders) if (!racing.includes(order.order_id)) expect(await land(order.order_id, 'preparing')).toBe(200);
    for (const id of changes) expect((await sandbox.waitForDelivery(id)).status).toBe('delivered');
    await t.drained();
    const preparing = handled.filter((each) => each.status === 'preparing');
    expect(preparing.map((each) => each.orderId).sort()).toEqual(orders.map((order) => order.order_id).sort());
    // Racing ones ran from their real delivery; the others from reconcile, their real delivery covered.
    expect(preparing.filter((each) => each.source === 'reconcile').map((each) => each.orderId).sort()).toEqual(orders.map((order) => order.order_id).filter((id) => !racing.includes(id)).sort());
    expect(report.statusChanges).toBe(12);
  });

  it('handles nothing again in a second reconcile after the late real deliveries of a reconciled change arrive, in either order', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual, handled } = t;
    const [x, y] = [sandbox.createOrder(), sandbox.createOrder()];
    await sandbox.idle();
    await t.drained();
    // confirmed -> preparing -> dispatched while the receiver is down.
    await t.hook.stop();
    for (const order of [x, y]) {
      sandbox.setOrderStatus(order.order_id, 'preparing');
      sandbox.setOrderStatus(order.order_id, 'dispatched');
    }
    const changes = sandbox.deliveries({ event: 'order.status_changed' }).map((delivery) => delivery.id);
    await Promise.all(changes.map((id) => sandbox.waitForDelivery(id, (d) => d.status === 'retrying')));
    manual.advance(1000);
    const first = await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 });
    expect(first).toMatchObject({ ordersChecked: 2, statusChanges: 2 });
    await t.drained();
    // The real preparing and dispatched arrive after all: x's in order, y's dispatched first.
    const land = t.holdDeliveries();
    await t.hook.start();
    manual.advance(RETRY_DELAYS_MS[0]!);
    for (const [order, statuses] of [[x, ['preparing', 'dispatched']], [y, ['dispatched', 'preparing']]] as const) {
      for (const status of statuses) expect(await land(order.order_id, status)).toBe(200);
    }
    for (const id of changes) expect((await sandbox.waitForDelivery(id)).status).toBe('delivered');
    await t.drained();
    const received = (await t.inbox.stats()).received;

    manual.advance(1000);
    const second = await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 });
    expect(second).toMatchObject({ ordersChecked: 2, statusChanges: 0, createdRecovered: 0 });
    await t.drained();
    expect((await t.inbox.stats()).received).toBe(received);
    for (const order of [x, y]) {
      const ran = handled.filter((each) => each.orderId === order.order_id).map((each) => `${each.status} ${each.source ?? 'webhook'}`);
      expect(ran.filter((each) => each.startsWith('dispatched')), order.order_id).toEqual(['dispatched reconcile']);
      expect(ran.filter((each) => each.startsWith('preparing')), order.order_id).toEqual(['preparing webhook']);
    }
  });

  it('handles a reconciled status once when a late delivery of an earlier change, stamped later, arrives before a second reconcile', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual, handled } = t;
    const order = sandbox.createOrder();
    await sandbox.idle();
    await t.drained();
    // confirmed -> preparing -> dispatched -> delivered while the receiver is down.
    await t.hook.stop();
    for (const status of ['preparing', 'dispatched', 'delivered'] as const) sandbox.setOrderStatus(order.order_id, status);
    const changes = sandbox.deliveries({ event: 'order.status_changed' }).map((delivery) => delivery.id);
    await Promise.all(changes.map((id) => sandbox.waitForDelivery(id, (d) => d.status === 'retrying')));
    manual.advance(1000);
    expect(await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 })).toMatchObject({ statusChanges: 1 });
    await t.drained();
    // The retry of preparing -> dispatched lands first (its ts: the attempt's, after the reconcile's).
    const land = t.holdDeliveries();
    await t.hook.start();
    manual.advance(RETRY_DELAYS_MS[0]!);
    expect(await land(order.order_id, 'dispatched')).toBe(200);
    await t.drained();
    manual.advance(1000);
    // The inbox still has the order delivered (final): nothing to read, nothing to store.
    expect(await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 })).toMatchObject({ ordersChecked: 0, statusChanges: 0 });
    for (const status of ['preparing', 'delivered']) expect(await land(order.order_id, status)).toBe(200);
    for (const id of changes) expect((await sandbox.waitForDelivery(id)).status).toBe('delivered');
    await t.drained();
    const ran = handled.filter((each) => each.event === 'order.status_changed').map((each) => `${each.status} ${each.source ?? 'webhook'}`);
    expect(ran.sort()).toEqual(['delivered reconcile', 'dispatched webhook', 'preparing webhook']);
  });

  it('recovers the same transition missed twice, the order having really gone back in between: both run', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual, handled } = t;
    const order = sandbox.createOrder();
    await sandbox.idle();
    await t.drained();
    const missed = async (status: 'preparing') => {
      await t.hook.stop();
      sandbox.setOrderStatus(order.order_id, status);
      await t.outlastRetries([t.lastDelivery('order.status_changed').id]);
      await t.hook.start();
      manual.advance(1000);
    };
    await missed('preparing');
    expect(await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 })).toMatchObject({ statusChanges: 1, missed: [] });
    await t.drained();
    sandbox.setOrderStatus(order.order_id, 'confirmed');
    await sandbox.idle();
    await t.drained();
    await missed('preparing');
    const second = await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 });
    expect(second).toMatchObject({ statusChanges: 1, missed: [] });
    expect(second.recovered).toHaveLength(1);
    await t.drained();
    const ran = handled.filter((each) => each.event === 'order.status_changed').map((each) => `${each.status} ${each.source ?? 'webhook'}`);
    expect(ran).toEqual(['preparing reconcile', 'confirmed webhook', 'preparing reconcile']);
    // Nothing is left to say: a third reconcile finds the order where the service has it.
    manual.advance(1000);
    expect(await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 })).toMatchObject({ statusChanges: 0 });
  });

  it('reads at most maxReads orders a call, least recently checked first, so repeated calls get through all of them; a 404 counts in notFound', async () => {
    const t = await setUp(makeStore);
    const { sandbox, manual } = t;
    const orders = [0, 1, 2, 3, 4].map(() => sandbox.createOrder());
    await sandbox.idle();
    await t.drained();
    manual.advance(61 * MINUTE);
    const reads: string[] = [];
    const client = { ...t.client, orders: { get: async (id: string) => {
      reads.push(id);
      // The first order answers 404, as one deleted or outside the key's stores does.
      return id === orders[0]!.order_id ? t.client.orders.get('00000000-0000-4000-8000-000000000000') : t.client.orders.get(id);
    } }, webhooks: t.client.webhooks };
    const first = await t.inbox.reconcile({ client, maxReads: 2 });
    const second = await t.inbox.reconcile({ client, maxReads: 2 });
    const third = await t.inbox.reconcile({ client, maxReads: 2 });
    expect([first.ordersChecked, second.ordersChecked, third.ordersChecked]).toEqual([2, 2, 1]);
    expect(first.notFound + second.notFound + third.notFound).toBe(1);
    expect([...reads].sort()).toEqual(orders.map((order) => order.order_id).sort());
    // Each was checked now: nothing is read again until it is stale once more.
    expect((await t.inbox.reconcile({ client })).ordersChecked).toBe(0);
    manual.advance(61 * MINUTE);
    expect((await t.inbox.reconcile({ client })).ordersChecked).toBe(5);
    // Final orders are not read again.
    sandbox.setOrderStatus(orders[1]!.order_id, 'delivered');
    await sandbox.idle();
    await t.drained();
    manual.advance(61 * MINUTE);
    expect((await t.inbox.reconcile({ client })).ordersChecked).toBe(4);
    expect(first.missed).toEqual([]);
    expect((await t.inbox.stats()).missed).toBe(0);
  });
});

describe('inbox.reconcile: order.created waiting, scopes and options (sqliteStore)', () => {
  it('runs a recovered order.created before the status change that was waiting for it', async () => {
    const t = await setUp(stores[0]![1]);
    const { sandbox, handled } = t;
    await t.hook.stop();
    const y = sandbox.createOrder();
    await t.outlastRetries([t.lastDelivery('order.created').id]);
    await t.hook.start();
    sandbox.setOrderStatus(y.order_id, 'preparing');
    await sandbox.idle();
    // The change waits for its order.created (orderWaitMs, 10 minutes): nothing has run.
    expect((await t.inbox.stats()).pending).toBe(1);
    const report = await t.inbox.reconcile({ client: t.client, staleAfterMinutes: 0 });
    expect(report).toMatchObject({ ordersChecked: 1, createdRecovered: 1, statusChanges: 0 });
    await t.drained();
    expect(handled.map((each) => `${each.event} ${each.status} ${each.source ?? 'webhook'}`)).toEqual(['order.created preparing reconcile', 'order.status_changed preparing webhook']);
  });

  it('reports missed as unavailable, and keeps no record, when the key cannot read the delivery log', async () => {
    const t = await setUp(stores[0]![1]);
    t.sandbox.createOrder();
    await t.sandbox.idle();
    await t.drained();
    const readOnly = new IntegrationClient({ apiKey: t.sandbox.keys.readOnly, baseUrl: t.sandbox.url });
    t.manual.advance(1000);
    const report = await t.inbox.reconcile({ client: readOnly, staleAfterMinutes: 0 });
    expect(report).toMatchObject({ ordersChecked: 1, missed: [], missedUnavailable: expect.stringContaining('webhooks:manage') });
    expect(await t.inbox.lastReconcile()).toBeUndefined();
    expect((await t.inbox.stats()).missed).toBeUndefined();
  });

  it('refuses wrong options, and a store without the reconciliation methods, with InvalidInputError', async () => {
    const t = await setUp(stores[0]![1]);
    for (const options of [{ client: {} }, { client: t.client, maxReads: -1 }, { client: t.client, maxReads: 1.5 }, { client: t.client, staleAfterMinutes: Number.NaN }, { client: t.client, finalStatuses: 'delivered' }]) {
      await expect(t.inbox.reconcile(options as never), JSON.stringify(options)).rejects.toThrow(InvalidInputError);
    }
    const dir = tempDir('inbox-reconcile-bare');
    cleanups.push(() => dir.remove());
    const full = sqliteStore({ path: `${dir.path}/inbox.db` });
    const { staleOrders: _staleOrders, ...bare } = full;
    const inbox = createInbox({ secret: 'whsec_bare', store: bare });
    cleanups.push(() => inbox.close());
    await expect(inbox.reconcile({ client: t.client })).rejects.toThrow(/lacks staleOrders/);
  });
});

/** A sandbox whose retry window of about 14 h 36 min passes in about 2.6 s, delivering to an inbox's receiver. */
async function realTimeSetUp(makeStore = stores[0]![1]) {
  const sandbox = await createSandbox({ rate: false, timeScale: 0.00005 });
  cleanups.push(() => sandbox.close());
  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  let inbox: Inbox | undefined;
  const hook = await receiver((req, res) => inbox!.handler.node(req, res));
  const endpoint = await client.webhooks.create({ url: hook.url, events: ['order.created', 'order.status_changed'] });
  inbox = createInbox({ secret: endpoint.secret, store: makeStore() });
  cleanups.push(() => inbox!.close());
  return { sandbox, client, inbox, hook, endpoint };
}

describe.each(stores)('missed on %s, in real time: the receiver down past the retry window, a second endpoint of the key whose deliveries die', (_name, makeStore) => {
  it("counts only the inbox's endpoint, never webhook.test; recovers the status changes by reading whatever staleAfterMinutes says; a missed order.created stays open until acknowledged, whichever endpoints later runs count", async () => {
    const { sandbox, client, inbox, hook, endpoint } = await realTimeSetUp(makeStore);
    const handled: string[] = [];
    inbox.startWorker({ handlers: { 'order.status_changed': (event) => void handled.push(`${event.data.order_id} ${event.data.status}`) } });
    // Another receiver on the same key (nothing listens there): its deliveries are not this inbox's loss.
    const gone = await receiver(() => {});
    await gone.stop();
    const other = await client.webhooks.create({ url: gone.url, events: ['order.created', 'order.status_changed'] });
    const orders = [sandbox.createOrder(), sandbox.createOrder(), sandbox.createOrder()];
    await sandbox.idle();
    await hook.stop();
    sandbox.setOrderStatus(orders[0]!.order_id, 'dispatched');
    sandbox.setOrderStatus(orders[2]!.order_id, 'cancelled');
    sandbox.createOrder(); // its order.created dies: the inbox never hears of this order
    await client.webhooks.test(endpoint.id);
    await client.webhooks.test(other.id);
    await sandbox.idle();
    const dead = (webhookId: string, event?: string) => sandbox.deliveries({ webhookId, event }).filter((delivery) => delivery.status === 'dead').map((delivery) => delivery.id);
    const ownChanges = dead(endpoint.id, 'order.status_changed');
    const [ownCreated] = dead(endpoint.id, 'order.created');
    expect(ownChanges).toHaveLength(2);
    expect(dead(endpoint.id, 'webhook.test')).toHaveLength(1);
    expect(dead(other.id).length).toBeGreaterThan(5);
    await hook.start();

    // The default staleAfterMinutes (60): the orders are minutes old, and still every one is read back.
    const first = await inbox.reconcile({ client });
    expect(first).toMatchObject({ ordersChecked: 3, statusChanges: 2, createdRecovered: 0, endpointIds: [endpoint.id], endpointsGuessed: true });
    expect(first.otherEndpoints).toEqual([{ id: other.id, url: gone.url, consecutiveFailures: expect.any(Number) }]);
    expect(first.otherEndpoints[0]!.consecutiveFailures).toBeGreaterThan(0);
    expect([...first.newMissed].sort()).toEqual([...ownChanges, ownCreated].sort());
    expect(first.recovered.map((missed) => missed.deliveryId).sort()).toEqual([...ownChanges].sort());
    expect(first.missed.map((missed) => [missed.deliveryId, missed.event])).toEqual([[ownCreated, 'order.created']]);
    expect(first.advice.join(' ')).toContain("Look for orders created at that time in the platform's dashboard");
    await expect.poll(() => [...handled].sort(), { timeout: 10_000 }).toEqual([`${orders[0]!.order_id} dispatched`, `${orders[2]!.order_id} cancelled`].sort());
    expect((await inbox.stats()).missed).toBe(1);

    // A second run: nothing new, the order.created still open (a scheduler keeps alerting on it).
    const second = await inbox.reconcile({ client });
    expect(second).toMatchObject({ statusChanges: 0, newMissed: [], recovered: [] });
    expect(second.missed.map((missed) => missed.deliveryId)).toEqual([ownCreated]);
    // Someone found the order in the platform's dashboard: acknowledged, recorded with who and when.
    expect(await inbox.acknowledgeMissed(ownCreated!, { by: 'ops@erp' })).toBe(1);
    expect(await inbox.acknowledgeMissed(ownCreated!, { by: 'ops@erp' })).toBe(0);
    expect(await inbox.missed()).toEqual([]);
    const ended = await inbox.missed({ ended: true });
    expect(ended.map((missed) => [missed.deliveryId, missed.ended?.how, missed.ended?.by])).toEqual(
      expect.arrayContaining([[ownCreated, 'acknowledged', 'ops@erp'], ...ownChanges.map((id) => [id, 'recovered', null])]),
    );
    expect(ended.find((missed) => missed.deliveryId === ownCreated)!.ended!.at).toEqual(expect.any(Number));
    const third = await inbox.reconcile({ client });
    expect(third).toMatchObject({ missed: [], newMissed: [], recovered: [] });
    expect((await inbox.stats()).missed).toBe(0);
    expect(handled).toHaveLength(2);
    // Named, the other endpoint's dead deliveries are what count.
    const named = await inbox.reconcile({ client, endpointIds: [other.id] });
    expect(named).toMatchObject({ endpointIds: [other.id], endpointsGuessed: false, otherEndpoints: [{ id: endpoint.id }] });
    expect(named.newMissed.length).toBeGreaterThan(0);
    expect(named.missed.concat(named.recovered).every((missed) => missed.endpointId === other.id && missed.event !== 'webhook.test')).toBe(true);
    // Back to the inbox's own endpoint: the other's misses found meanwhile stay reported until they end.
    const back = await inbox.reconcile({ client });
    expect(back.endpointIds).toEqual([endpoint.id]);
    expect(back.missed.map((missed) => missed.deliveryId).sort()).toEqual(named.missed.map((missed) => missed.deliveryId).sort());
    expect((await inbox.stats()).missed).toBe(named.missed.length);
  });
});

describe('inbox.reconcile in real time, the retry window shortened by the sandbox time scale (sqliteStore)', () => {
  it('recovers what died while the receiver was down, then a second reconcile adds nothing', async () => {
    const { sandbox, client, inbox, hook } = await realTimeSetUp();
    const handled: string[] = [];
    inbox.startWorker({ handlers: { 'order.status_changed': (event) => void handled.push(`${event.data.order_id} ${event.data.status}`) } });
    const orders = [sandbox.createOrder(), sandbox.createOrder(), sandbox.createOrder()];
    await sandbox.idle();
    await hook.stop();
    sandbox.setOrderStatus(orders[0]!.order_id, 'dispatched');
    sandbox.setOrderStatus(orders[2]!.order_id, 'cancelled');
    await sandbox.idle();
    const dead = sandbox.deliveries().filter((delivery) => delivery.status === 'dead').map((delivery) => delivery.id);
    expect(dead).toHaveLength(2);
    await hook.start();

    const report = await inbox.reconcile({ client, staleAfterMinutes: 0 });
    expect(report).toMatchObject({ ordersChecked: 3, statusChanges: 2, createdRecovered: 0, notFound: 0, missed: [] });
    expect(report.recovered.map((missed) => missed.deliveryId).sort()).toEqual([...dead].sort());
    await expect.poll(() => [...handled].sort(), { timeout: 10_000 }).toEqual([`${orders[0]!.order_id} dispatched`, `${orders[2]!.order_id} cancelled`].sort());
    const second = await inbox.reconcile({ client, staleAfterMinutes: 0 });
    expect(second).toMatchObject({ statusChanges: 0, createdRecovered: 0 });
    expect(handled).toHaveLength(2);
  });

  it('passes over an order its client cannot read (a null e-mail the schema refuses), counts it unreadable, and recovers the others', async () => {
    const { sandbox, client, inbox, hook } = await realTimeSetUp();
    const good = sandbox.createOrder();
    const odd = sandbox.createOrder({ customer: { name: 'X', phone: '+5511900000000', email: null } } as never);
    await sandbox.idle();
    await hook.stop();
    sandbox.setOrderStatus(good.order_id, 'dispatched');
    sandbox.setOrderStatus(odd.order_id, 'dispatched');
    await sandbox.idle();
    await expect(client.orders.get(odd.order_id)).rejects.toThrow(/customer\.email/);
    for (let run = 0; run < 2; run += 1) {
      const report = await inbox.reconcile({ client, staleAfterMinutes: 0 });
      // A second run finds the good order already recovered; the odd one fails the same way, alone.
      expect(report).toMatchObject({ ordersChecked: 2, statusChanges: run === 0 ? 1 : 0, unreadable: 1, notFound: 0 });
      // The delivery log names no order: either miss may be the odd order's, so neither is recovered.
      expect(report.missed).toHaveLength(2);
      expect(report.recovered).toEqual([]);
    }
  });
});
