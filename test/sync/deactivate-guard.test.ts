// A failed export never switches the catalog off (issue 26 item 3): sync.deactivate refuses with a
// SyncGuardError, deactivating nothing, when the last complete run read no items or the orphans are
// more than maxDeactivateShare of what was acknowledged, until the exact count is confirmed. Against
// the sandbox over its socket, on SQLite and Postgres.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from 'integration-sdk/sandbox';
import { createSync, SyncGuardError, type SyncOrphan } from 'integration-sdk/sync';
import { clientFor, onCleanup, startSandbox } from '../e2e/helpers.ts';
import { openState, useBothStates, type StateEnv } from './support/states.ts';

const states = useBothStates('deactivate-guard');

function catalog(sandbox: Sandbox, count: number) {
  const [store] = sandbox.storeIds;
  return Array.from({ length: count }, (_, i) => ({ external_id: `G-${i}`, name: `Product ${i}`, price: 2, stores: [{ store_id: store!, stock_quantity: 1 }] }));
}

function syncOn(sandbox: Sandbox, env: StateEnv, maxDeactivateShare?: number) {
  const { client } = clientFor(sandbox);
  const sync = createSync({ client, state: openState(env), ...(maxDeactivateShare === undefined ? {} : { maxDeactivateShare }) });
  onCleanup(() => sync.close());
  return sync;
}

const activeCount = (sandbox: Sandbox, count: number) =>
  Array.from({ length: count }, (_, i) => sandbox.getProduct(`G-${i}`)!).filter((product) => Object.values(product.stores).every((store) => store.active !== false)).length;

async function refusal(promise: Promise<unknown>): Promise<SyncGuardError> {
  const error = await promise.then(() => undefined, (rejected: unknown) => rejected);
  expect(error).toBeInstanceOf(SyncGuardError);
  return error as SyncGuardError;
}

describe.each(states)('the deactivation guard, on $name', (store) => {
  it('an export with no items deactivates nothing until the exact count is confirmed', async () => {
    const sandbox = await startSandbox();
    const sync = syncOn(sandbox, store.fresh());
    await sync.catalog(catalog(sandbox, 50));
    // A header-only file: a complete run of no items, and every product an orphan.
    expect((await sync.catalog([])).orphans).toBe(50);
    const refused = await refusal(sync.deactivate('catalog', sync.orphans('catalog')));
    expect(refused).toMatchObject({ reason: 'empty-run', count: 50, acknowledged: 50, kind: 'catalog' });
    expect(refused.message).toContain('50 of the 50 catalog items acknowledged before');
    expect(refused.message).toContain('{ confirm: 50 }');
    // A share that would allow it does not: an empty export needs the count.
    await refusal(sync.deactivate('catalog', sync.orphans('catalog'), { maxDeactivateShare: 1 }));
    expect(await refusal(sync.deactivate('catalog', sync.orphans('catalog'), { confirm: 49 }))).toMatchObject({ reason: 'confirm-mismatch', confirmed: 49, count: 50 });
    expect(activeCount(sandbox, 50)).toBe(50);

    expect(await sync.deactivate('catalog', sync.orphans('catalog'), { confirm: 50 })).toMatchObject({ deactivated: 50, errors: 0 });
    expect(activeCount(sandbox, 50)).toBe(0);
  });

  it('a file cut to a third deactivates nothing; { confirm: n } deactivates exactly n', async () => {
    const sandbox = await startSandbox();
    const sync = syncOn(sandbox, store.fresh());
    const items = catalog(sandbox, 30);
    await sync.catalog(items);
    expect((await sync.catalog(items.slice(0, 10))).orphans).toBe(20);
    const refused = await refusal(sync.deactivate('catalog', sync.orphans('catalog')));
    expect(refused).toMatchObject({ reason: 'share', count: 20, acknowledged: 30, maxDeactivateShare: 0.1 });
    expect(refused.message).toMatch(/20 of the 30 catalog items acknowledged before.*66\.7%, above maxDeactivateShare 10%/);
    expect(activeCount(sandbox, 30)).toBe(30);

    // A one-shot list (a generator) is counted too.
    const listed: SyncOrphan[] = [];
    for await (const orphan of sync.orphans('catalog')) listed.push(orphan);
    async function* once() {
      yield* listed;
    }
    expect(await sync.deactivate('catalog', once(), { confirm: 20 })).toMatchObject({ deactivated: 20, errors: 0 });
    expect(activeCount(sandbox, 30)).toBe(10);
    expect(activeCount(sandbox, 10)).toBe(10);
  });

  it('a few orphans within maxDeactivateShare go without confirmation; the share is an option', async () => {
    const sandbox = await startSandbox();
    const env = store.fresh();
    const items = catalog(sandbox, 30);
    const sync = syncOn(sandbox, env);
    await sync.catalog(items);
    await sync.catalog(items.slice(0, 27));
    expect(await sync.deactivate('catalog', sync.orphans('catalog'))).toMatchObject({ deactivated: 3 });
    await sync.catalog(items.slice(0, 20));
    const orphans = [];
    for await (const orphan of sync.orphans('catalog')) orphans.push(orphan);
    expect(orphans).toHaveLength(7);
    // 7 of the 27 still acknowledged: 26% (30% allowed on this sync).
    await refusal(sync.deactivate('catalog', orphans));
    expect(await syncOn(sandbox, env, 0.3).deactivate('catalog', orphans)).toMatchObject({ deactivated: 7 });
  });
});
