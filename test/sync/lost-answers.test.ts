// Sent but not acknowledged is unknown, not unchanged (issue 26 item 1), against the sandbox over its
// socket, on SQLite and Postgres. Price 50 is acknowledged; 39.9 is sent and applied by the service,
// and its answer is lost (the connection cut, a 500 after processing, the process killed before it
// recorded the answer); the promotion ends and the ERP says 50 again: 50 must be sent.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FaultKind, Sandbox } from 'integration-sdk/sandbox';
import { IntegrationClient } from 'integration-sdk';
import { createSync } from 'integration-sdk/sync';
import { clientFor, onCleanup, startSandbox } from '../e2e/helpers.ts';
import { openState, useBothStates, type StateEnv } from './support/states.ts';

const states = useBothStates('lost-answers');
const lostAnswerProcess = fileURLToPath(new URL('./support/answer-lost-process.ts', import.meta.url));

const product = (price: number) => [{ external_id: 'PROMO-1', name: 'Coffee 500g', price }];

function syncOn(sandbox: Sandbox, env: StateEnv, apiKey?: string) {
  const { client, exchanges } = clientFor(sandbox, apiKey ? { apiKey } : {});
  const sync = createSync({ client, state: openState(env) });
  onCleanup(() => sync.close());
  return { sync, exchanges };
}

/** 39.9 is sent while every write is applied, then answered `fault` (retries included). */
async function promotionWithFault(sandbox: Sandbox, env: StateEnv, fault: FaultKind) {
  const { sync } = syncOn(sandbox, env);
  // The fault starts once health() has answered: the first progress comes before the first batch leaves.
  const lost = await sync.catalog(product(39.9), { onProgress: () => sandbox.setFaults({ rate: 1, kinds: [fault] }) });
  sandbox.setFaults(null);
  expect(lost).toMatchObject({ sent: 1, updated: 0, errors: 1 });
}

/**
 * The service's own answer to a product write, with every item turned into an item-level INTERNAL
 * error (spec 4.2 rule 8 lists it among item errors): applied, but answered as if it failed.
 */
const appliedThenInternal: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  if (request.method !== 'POST' || !response.ok) return response;
  const body = (await response.json()) as { results: { index: number; external_id: string }[] };
  const results = body.results.map(({ index, external_id }) => ({ index, external_id, status: 'error', error: { code: 'INTERNAL', message: 'internal error' } }));
  return Response.json({ ...body, summary: { created: 0, updated: 0, errors: results.length }, results });
};

/** 39.9 is sent by a process killed once the service has answered, before it records the answer. */
async function promotionKilled(sandbox: Sandbox, env: StateEnv) {
  const child = spawn(process.execPath, ['--no-warnings', lostAnswerProcess], {
    env: { ...process.env, ...env, SYNC_URL: sandbox.url, SYNC_KEY: sandbox.apiKey, SYNC_ITEMS: JSON.stringify(product(39.9)) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('applied')) resolve();
      if (chunk.toString().includes('done')) reject(new Error('the run recorded its answer before the kill'));
    });
    child.on('exit', () => reject(new Error('the child exited before the service answered')));
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

describe.each(states)('sent but not acknowledged, on $name', (store) => {
  const ways = [
    ['the connection is cut after the service applied the batch', (sandbox: Sandbox, env: StateEnv) => promotionWithFault(sandbox, env, 'drop')],
    ['the service answers 500 after applying the batch', (sandbox: Sandbox, env: StateEnv) => promotionWithFault(sandbox, env, 'processed500')],
    ['the process is SIGKILLed between the request and its record', promotionKilled],
  ] as const;

  it.each(ways)('%s: the ERP goes back to the acknowledged value and the next run sends it', { timeout: 60_000 }, async (_way, loseTheAnswer) => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    expect(await syncOn(sandbox, env).sync.catalog(product(50))).toMatchObject({ sent: 1, created: 1 });

    await loseTheAnswer(sandbox, env);
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(39.9);

    // A new sync object, as the next cron run would be; after a kill it takes the dead run's lease at once.
    const { sync, exchanges } = syncOn(sandbox, env);
    const back = await sync.catalog(product(50));
    expect(back).toMatchObject({ total: 1, unchanged: 0, sent: 1, updated: 1, errors: 0 });
    expect(exchanges.filter((e) => e.method === 'POST')).toHaveLength(1);
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(50);
    // Acknowledged now: unchanged from here on.
    expect(await sync.catalog(product(50))).toMatchObject({ unchanged: 1, sent: 0 });
  });

  // An item error is not "nothing happened" (review 3, finding 2): STORE_WRITE_FAILED writes the
  // product fields and the other stores, INTERNAL says nothing, and an earlier lost answer's mark
  // must survive the error. The next run sends the item whatever its fingerprint.
  it('stock: a lost answer, then STORE_WRITE_FAILED on the resend: the run after sends the acknowledged value', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    const [s1] = sandbox.storeIds;
    const stock = (price: number) => [{ external_id: 'PROMO-1', store_id: s1!, price_override: price }];
    const { sync, exchanges } = syncOn(sandbox, env);
    await sync.catalog(product(50));
    expect(await sync.stock(stock(50))).toMatchObject({ sent: 1, updated: 1 });
    const lost = await sync.stock(stock(39.9), { onProgress: () => sandbox.setFaults({ rate: 1, kinds: ['drop'] }) });
    sandbox.setFaults(null);
    expect(lost).toMatchObject({ sent: 1, updated: 0, errors: 1 });
    expect(sandbox.getProduct('PROMO-1')?.stores[s1!]?.price_override).toBe(39.9);

    sandbox.setStoreWriteFailure(s1!, true);
    const failed = await sync.stock(stock(50));
    expect(failed).toMatchObject({ sent: 1, errors: 1 });
    expect(failed.results[0]).toMatchObject({ error: { code: 'STORE_WRITE_FAILED' } });
    sandbox.setStoreWriteFailure(s1!, false);

    exchanges.length = 0;
    expect(await sync.stock(stock(50))).toMatchObject({ unchanged: 0, sent: 1, updated: 1 });
    expect(exchanges.filter((e) => e.method === 'PATCH')).toHaveLength(1);
    expect(sandbox.getProduct('PROMO-1')?.stores[s1!]?.price_override).toBe(50);
    expect(await sync.stock(stock(50))).toMatchObject({ unchanged: 1, sent: 0 });
  });

  it('catalog: STORE_WRITE_FAILED wrote the new price; when the ERP goes back, the acknowledged value is sent', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const [a, b] = sandbox.storeIds;
    const item = (price: number) => [{ ...product(price)[0]!, stores: [{ store_id: a!, stock_quantity: 1 }, { store_id: b!, stock_quantity: 1 }] }];
    const { sync } = syncOn(sandbox, store.fresh());
    expect(await sync.catalog(item(50))).toMatchObject({ created: 1 });
    sandbox.setStoreWriteFailure(b!, true);
    const partial = await sync.catalog(item(39.9));
    expect(partial.results[0]).toMatchObject({ error: { code: 'STORE_WRITE_FAILED' } });
    sandbox.setStoreWriteFailure(b!, false);
    // The service wrote the product's fields and its other store.
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(39.9);

    expect(await sync.catalog(item(50))).toMatchObject({ unchanged: 0, sent: 1, updated: 1 });
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(50);
    expect(await sync.catalog(item(50))).toMatchObject({ unchanged: 1, sent: 0 });
  });

  it('catalog: an item answered INTERNAL after the service applied it: the acknowledged value is sent next run', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    expect(await syncOn(sandbox, env).sync.catalog(product(50))).toMatchObject({ created: 1 });
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url, rateLimit: false, fetch: appliedThenInternal });
    const internal = createSync({ client, state: openState(env) });
    onCleanup(() => internal.close());
    const answered = await internal.catalog(product(39.9));
    expect(answered).toMatchObject({ sent: 1, updated: 0, errors: 1 });
    expect(answered.results[0]).toMatchObject({ status: 'error', error: { code: 'INTERNAL' } });
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(39.9);

    const { sync } = syncOn(sandbox, env);
    expect(await sync.catalog(product(50))).toMatchObject({ unchanged: 0, sent: 1, updated: 1 });
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(50);
  });

  it('an item refused outright (FORBIDDEN_STORE) is sent again next run, even at the acknowledged value', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    const [allowed, forbidden] = sandbox.storeIds;
    const item = (price: number, storeId: string) => [{ ...product(price)[0]!, stores: [{ store_id: storeId, stock_quantity: 1 }] }];
    const { sync } = syncOn(sandbox, env, sandbox.keys.oneStore);
    expect(await sync.catalog(item(50, allowed!))).toMatchObject({ created: 1 });
    const refused = await sync.catalog(item(39.9, forbidden!));
    expect(refused.results[0]).toMatchObject({ error: { code: 'FORBIDDEN_STORE' } });
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(50);
    // The last answer for this item was an error: it is not "unchanged", whatever its fingerprint.
    expect(await sync.catalog(item(50, allowed!))).toMatchObject({ unchanged: 0, sent: 1, updated: 1 });
    expect(await sync.catalog(item(50, allowed!))).toMatchObject({ unchanged: 1, sent: 0 });
  });
});
