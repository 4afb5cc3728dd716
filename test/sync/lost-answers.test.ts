// Sent but not acknowledged is unknown, not unchanged (issue 26 item 1), against the sandbox over its
// socket, on SQLite and Postgres. Price 50 is acknowledged; 39.9 is sent and applied by the service,
// and its answer is lost (the connection cut, a 500 after processing, the process killed before it
// recorded the answer); the promotion ends and the ERP says 50 again: 50 must be sent.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FaultKind, Sandbox } from 'integration-sdk/sandbox';
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

  it('an item error answered by the service clears the mark and keeps the old fingerprint', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    const [allowed, forbidden] = sandbox.storeIds;
    const item = (price: number, storeId: string) => [{ ...product(price)[0]!, stores: [{ store_id: storeId, stock_quantity: 1 }] }];
    const { sync } = syncOn(sandbox, env, sandbox.keys.oneStore);
    expect(await sync.catalog(item(50, allowed!))).toMatchObject({ created: 1 });
    const refused = await sync.catalog(item(39.9, forbidden!));
    expect(refused.results[0]).toMatchObject({ error: { code: 'FORBIDDEN_STORE' } });
    expect(sandbox.getProduct('PROMO-1')?.price).toBe(50);
    // The service said what happened (nothing): what it holds is what was acknowledged.
    expect(await sync.catalog(item(50, allowed!))).toMatchObject({ unchanged: 1, sent: 0 });
    // The refused item still differs from the acknowledged one: sent again.
    expect(await sync.catalog(item(39.9, forbidden!))).toMatchObject({ sent: 1, errors: 1 });
  });
});
