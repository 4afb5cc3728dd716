// A rotation's one owner (src/tenants/rotation-lease.ts) on a real SQLite tenants store, its time
// on the manual clock: a running owner renews its lease, so a second call is refused however long
// the rotation takes; an owner that stopped renewing is replaced once its lease ran out; one whose
// process on this host is gone is replaced at once.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { TenantRotationError } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { ROTATION_LEASE_MS, RotationLease } from '../../src/tenants/rotation-lease.ts';
import type { TenantStore } from '../../src/tenants/store.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { manualClock } from '../inbox/support/inbox-fixture.ts';
import { rejectionOf } from '../e2e/helpers.ts';

const dir = tempDir('rotation-lease');
let files = 0;
const stores: TenantStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** A store holding one connected tenant 'loja-1', a clock, and a rotation of it begun by `first`. */
async function rotating() {
  const { clock, manual } = manualClock();
  const store = sqliteTenantStore({ path: `${dir.path}/tenants-${++files}.db` });
  stores.push(store);
  const first = new RotationLease(store, clock, 'loja-1');
  const at = clock.now();
  const intent = { id: 'loja-1', merchantId: 'm-1', storeIds: [], scopes: [], apiKey: 'sealed', keyChanged: true, allowSameMerchant: false, at, owner: first.owner() };
  await store.beginConnect(intent);
  await store.finishConnect('loja-1', 'ep-1', at);
  await store.beginRotation('loja-1', 'ep-1', at, first.owner());
  return { store, clock, manual, first };
}

/** Lets the store calls a timer started run to their end. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('a rotation has one owner', () => {
  it('a running owner renews its lease: a second call is refused with in_progress long after the first lease would have ended', async () => {
    const { store, clock, manual, first } = await rotating();
    let finish!: () => void;
    const running = first.hold(() => new Promise<void>((resolve) => (finish = resolve)));
    for (let minute = 0; minute < 3; minute++) {
      for (let tick = 0; tick < 3; tick++) {
        manual.advance(ROTATION_LEASE_MS / 3);
        await settle();
      }
      const error = await rejectionOf(new RotationLease(store, clock, 'loja-1').claim());
      expect(error).toBeInstanceOf(TenantRotationError);
      expect(error).toMatchObject({ reason: 'in_progress', tenantId: 'loja-1' });
    }
    finish();
    await running;
    expect((await store.rotation('loja-1'))?.owner?.token).toBe(first.token);
  });

  it('an owner that stopped renewing (its process died on another host) is replaced once its lease ran out, not before', async () => {
    const { store, clock, manual, first } = await rotating();
    await store.renewRotation('loja-1', first.token, clock.now() + ROTATION_LEASE_MS);
    manual.advance(ROTATION_LEASE_MS - 1);
    expect(await rejectionOf(new RotationLease(store, clock, 'loja-1').claim())).toMatchObject({ reason: 'in_progress' });
    manual.advance(2);
    const second = new RotationLease(store, clock, 'loja-1');
    expect(await second.claim()).toMatchObject({ step: 'registering', oldEndpointId: 'ep-1', owner: { token: second.token } });
  });

  it('an owner whose process on this host is gone is replaced at once; one that failed let the rotation go', async () => {
    const { store, clock } = await rotating();
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const dead = new RotationLease(store, clock, 'loja-1');
    const claimedByDead = await store.claimRotation('loja-1', { owner: { ...dead.owner(), pid: child.pid! }, at: clock.now(), replacing: (await store.rotation('loja-1'))!.owner!.token });
    expect(claimedByDead?.owner?.pid).toBe(child.pid);

    const next = new RotationLease(store, clock, 'loja-1');
    expect((await next.claim())?.owner?.token).toBe(next.token);

    await expect(next.hold(() => Promise.reject(new Error('the service answered 500')))).rejects.toThrow('the service answered 500');
    expect((await store.rotation('loja-1'))?.owner).toBeNull();
    const after = new RotationLease(store, clock, 'loja-1');
    expect((await after.claim())?.owner?.token).toBe(after.token);
  });
});
