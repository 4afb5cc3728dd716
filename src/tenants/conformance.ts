import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import type { ConnectIntent, TenantRotationOwner, TenantStore } from './store.ts';

const T0 = 1_800_000_000_000;
const M1 = '3f6c1e2a-8d4b-4c7e-9a10-5b2f7d9e4c01';
const M2 = '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const LEASE = 60_000;

/** A call owning a rotation, its lease from `at`. */
const owner = (token: string, at = T0): TenantRotationOwner => ({ token, host: 'host-1', pid: 4242, leaseUntil: at + LEASE });

function intent(id: string, overrides: Partial<ConnectIntent> = {}): ConnectIntent {
  return {
    id,
    merchantId: M1,
    storeIds: ['s-1'],
    scopes: ['orders:read', 'webhooks:manage'],
    apiKey: `sealed-key-of-${id}`,
    keyChanged: true,
    allowSameMerchant: false,
    at: T0,
    owner: owner('call-1', overrides.at ?? T0),
    ...overrides,
  };
}

/**
 * The behaviour every {@link TenantStore} must have, as a test suite. Run it with a factory that
 * returns a fresh, empty store each time; the shipped SQLite and Postgres stores run the same suite.
 *
 * @example
 * ```ts
 * import { describe, it, expect, beforeEach, afterEach } from 'vitest';
 * import { tenantStoreConformance } from 'integration-sdk/tenants';
 *
 * tenantStoreConformance('my MySQL store', () => mysqlTenantStore({ url }), { describe, it, expect, beforeEach, afterEach });
 * ```
 */
export function tenantStoreConformance(name: string, makeStore: () => TenantStore | Promise<TenantStore>, api: ConformanceTestApi): void {
  const { describe, it, expect, beforeEach, afterEach } = api;
  describe(`TenantStore conformance: ${name}`, () => {
    let store: TenantStore;
    beforeEach(async () => {
      store = await makeStore();
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
    });

    it('records a connect intent, then finishes it once, keeping the first connectedAt', async () => {
      expect(await store.get('a')).toBeNull();
      const begun = await store.beginConnect(intent('a'));
      expect(begun).toMatchObject({ outcome: 'ok', record: { id: 'a', merchantId: M1, status: 'connecting', apiKey: 'sealed-key-of-a', keyGeneration: 1, endpointId: null, connectedAt: null } });
      const done = await store.finishConnect('a', 'ep-1', T0 + 5);
      expect(done).toMatchObject({ status: 'active', endpointId: 'ep-1', connectedAt: T0 + 5, keyInvalidAt: null, storeIds: ['s-1'], scopes: ['orders:read', 'webhooks:manage'] });
      // A second connect of an active tenant keeps it active and its first connectedAt; the same key keeps its generation.
      expect(await store.beginConnect(intent('a', { keyChanged: false, at: T0 + 10 }))).toMatchObject({ outcome: 'ok', record: { status: 'active', keyGeneration: 1 } });
      expect(await store.finishConnect('a', 'ep-2', T0 + 11)).toMatchObject({ connectedAt: T0 + 5, endpointId: 'ep-2' });
      expect(await store.rotation('a')).toBeNull();
    });

    it('refuses a connect of a tenant whose disconnect did not finish, writing nothing', async () => {
      await store.beginConnect(intent('a'));
      await store.finishConnect('a', 'ep-1', T0);
      await store.beginDisconnect('a', T0 + 1);
      expect(await store.beginConnect(intent('a', { apiKey: 'sealed-other', at: T0 + 2 }))).toEqual({ outcome: 'disconnecting' });
      expect(await store.get('a')).toMatchObject({ status: 'disconnecting', apiKey: 'sealed-key-of-a', keyGeneration: 1, updatedAt: T0 + 1 });
      expect(await store.rotation('a')).toBeNull();
    });

    it('a new key for a connected tenant begins a key change that keeps the old key sealed until its endpoint is retired', async () => {
      await store.beginConnect(intent('a'));
      await store.finishConnect('a', 'ep-1', T0);
      const before = (await store.secretChanges(0, 1)).latest;
      const begun = await store.beginConnect(intent('a', { apiKey: 'sealed-k2', at: T0 + 10 }));
      expect(begun).toMatchObject({
        outcome: 'ok',
        record: { status: 'active', apiKey: 'sealed-k2', keyGeneration: 2, rotatingSince: T0 + 10 },
        rotation: { tenantId: 'a', kind: 'key', step: 'registering', oldEndpointId: 'ep-1', newEndpointId: null, retiringKey: 'sealed-key-of-a', owner: owner('call-1', T0 + 10), startedAt: T0 + 10 },
      });
      expect((await store.secretChanges(before, 10)).changes.map((change) => change.tenantId)).toEqual(['a']);
      // Another call while the owner's lease holds: refused, nothing written.
      const other = intent('a', { apiKey: 'sealed-k3', at: T0 + 11, owner: owner('call-2', T0 + 11) });
      expect(await store.beginConnect(other)).toMatchObject({ outcome: 'in_progress', rotation: { owner: { token: 'call-1' } } });
      expect((await store.get('a'))?.apiKey).toBe('sealed-k2');
      // The owner's process is gone: the other call replaces it; with yet another key, the change to k2 must finish first.
      const pending = await store.beginConnect({ ...other, replacing: 'call-1' });
      expect(pending).toMatchObject({ outcome: 'key_change_pending', rotation: { kind: 'key', retiringKey: 'sealed-key-of-a', owner: { token: 'call-2' } } });
      expect((await store.get('a'))?.apiKey).toBe('sealed-k2');
      // k2 turns out refused: k3 replaces it, and the key change still retires the first key's endpoint.
      expect(await store.markKeyInvalid('a', 2, T0 + 12)).toBe(true);
      const third = await store.beginConnect({ ...other, at: T0 + 13 });
      expect(third).toMatchObject({
        outcome: 'ok',
        record: { status: 'active', apiKey: 'sealed-k3', keyGeneration: 3, keyInvalidAt: null },
        rotation: { kind: 'key', step: 'registering', oldEndpointId: 'ep-1', retiringKey: 'sealed-key-of-a', owner: { token: 'call-2' } },
      });
      // The same key again (a second call completing it) claims the key change, once the owner let it go.
      await store.releaseRotation('a', 'call-2');
      expect(await store.beginConnect(intent('a', { apiKey: 'sealed-k3', keyChanged: false, at: T0 + 14 }))).toMatchObject({
        outcome: 'ok',
        record: { keyGeneration: 3 },
        rotation: { kind: 'key', owner: { token: 'call-1' } },
      });
    });

    it('a key change of a key_invalid tenant keeps no old key: it is never sent again', async () => {
      await store.beginConnect(intent('a'));
      await store.finishConnect('a', 'ep-1', T0);
      await store.markKeyInvalid('a', 1, T0 + 1);
      expect(await store.beginConnect(intent('a', { apiKey: 'sealed-k2', at: T0 + 2 }))).toMatchObject({
        outcome: 'ok',
        record: { status: 'active', keyInvalidAt: null, keyGeneration: 2 },
        rotation: { kind: 'key', oldEndpointId: 'ep-1', retiringKey: null },
      });
    });

    it('refuses a second tenant id for one merchant, writing nothing, unless it may share it', async () => {
      await store.beginConnect(intent('a'));
      expect(await store.beginConnect(intent('b'))).toEqual({ outcome: 'merchant_taken', existingTenantId: 'a' });
      expect(await store.get('b')).toBeNull();
      expect(await store.beginConnect(intent('b', { allowSameMerchant: true }))).toMatchObject({ outcome: 'ok', record: { allowSameMerchant: true } });
      expect(await store.beginConnect(intent('c', { merchantId: M2 }))).toMatchObject({ outcome: 'ok' });
    });

    it('refuses a key of another merchant for a connected tenant, but not for a disconnected one', async () => {
      await store.beginConnect(intent('a'));
      expect(await store.beginConnect(intent('a', { merchantId: M2 }))).toEqual({ outcome: 'merchant_mismatch', merchantId: M1 });
      expect((await store.get('a'))?.merchantId).toBe(M1);
      await store.beginDisconnect('a', T0 + 1);
      await store.finishDisconnect('a', T0 + 2);
      expect(await store.beginConnect(intent('a', { merchantId: M2 }))).toMatchObject({ outcome: 'ok', record: { merchantId: M2, status: 'connecting' } });
    });

    it('keeps secrets per endpoint, newest first, and drops one', async () => {
      await store.beginConnect(intent('a'));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-2', secret: 'sealed-2', createdAt: T0 + 1 });
      await store.putSecret({ tenantId: 'b', endpointId: 'ep-9', secret: 'sealed-9', createdAt: T0 });
      expect(await store.secrets('a')).toEqual([
        { tenantId: 'a', endpointId: 'ep-2', secret: 'sealed-2', createdAt: T0 + 1, verifiedAt: null },
        { tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0, verifiedAt: null },
      ]);
      await store.deleteSecret('a', 'ep-2');
      expect((await store.secrets('a')).map((s) => s.endpointId)).toEqual(['ep-1']);
    });

    it('records the first verification of a secret only, and a secret put again starts unverified', async () => {
      await store.beginConnect(intent('a'));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-2', secret: 'sealed-2', createdAt: T0 + 1 });
      expect(await store.markSecretVerified('a', 'ep-2', T0 + 5)).toBe(true);
      expect(await store.markSecretVerified('a', 'ep-2', T0 + 6)).toBe(false);
      expect(await store.markSecretVerified('a', 'ep-9', T0 + 6)).toBe(false);
      expect(await store.markSecretVerified('b', 'ep-1', T0 + 6)).toBe(false);
      expect((await store.secrets('a')).map((s) => [s.endpointId, s.verifiedAt])).toEqual([['ep-2', T0 + 5], ['ep-1', null]]);
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-2', secret: 'sealed-2b', createdAt: T0 + 7 });
      expect((await store.secrets('a'))[0]).toMatchObject({ endpointId: 'ep-2', secret: 'sealed-2b', verifiedAt: null });
    });

    it('keeps when a rotation began, until it ends', async () => {
      expect(await store.setRotating('a', T0)).toBe(false);
      await store.beginConnect(intent('a'));
      expect((await store.get('a'))?.rotatingSince).toBeNull();
      expect(await store.setRotating('a', T0 + 1)).toBe(true);
      expect((await store.get('a'))?.rotatingSince).toBe(T0 + 1);
      expect((await store.list({ limit: 10 }))[0]?.rotatingSince).toBe(T0 + 1);
      expect(await store.setRotating('a', null)).toBe(true);
      expect((await store.get('a'))?.rotatingSince).toBeNull();
    });

    it('numbers every change of what a receiver accepts for a tenant, in order', async () => {
      const start = (await store.secretChanges(0, 1)).latest;
      const since = async () => (await store.secretChanges(start, 100)).changes.map((change) => change.tenantId);
      await store.beginConnect(intent('a')); // a new tenant: connecting
      await store.beginConnect(intent('a', { keyChanged: false })); // no status change: nothing
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.finishConnect('a', 'ep-1', T0);
      await store.markSecretVerified('a', 'ep-1', T0); // nothing a receiver accepts changed
      await store.beginConnect(intent('b', { merchantId: M2 }));
      await store.setRotating('a', T0);
      await store.deleteSecret('a', 'ep-9'); // nothing deleted: nothing
      await store.deleteSecret('a', 'ep-1');
      await store.beginDisconnect('b', T0);
      await store.finishDisconnect('b', T0);
      expect(await since()).toEqual(['a', 'a', 'a', 'b', 'a', 'a', 'b', 'b']);
      const { changes, latest } = await store.secretChanges(start, 100);
      expect(changes.map((change) => change.seq)).toEqual([...changes.map((change) => change.seq)].sort((x, y) => x - y));
      expect(latest).toBe(changes.at(-1)!.seq);
      expect((await store.secretChanges(changes[4]!.seq, 2)).changes.map((change) => change.tenantId)).toEqual(['a', 'b']);
      expect((await store.secretChanges(latest, 10)).changes).toEqual([]);
    });

    it('marks key_invalid (connecting or active) only for the key generation that met the 401, a numbered change; a new key restores it', async () => {
      await store.beginConnect(intent('a'));
      // A connect that did not finish meets the 401 too: no request is sent with that key any more.
      expect(await store.markKeyInvalid('a', 2, T0 + 1)).toBe(false);
      const before = (await store.secretChanges(0, 1)).latest;
      expect(await store.markKeyInvalid('a', 1, T0 + 1)).toBe(true);
      expect((await store.secretChanges(before, 10)).changes.map((change) => change.tenantId)).toEqual(['a']);
      expect(await store.get('a')).toMatchObject({ status: 'key_invalid', keyInvalidAt: T0 + 1, connectedAt: null });
      expect(await store.markKeyInvalid('a', 1, T0 + 2)).toBe(false);
      // A new key of a tenant that never finished connecting: connecting again.
      expect(await store.beginConnect(intent('a', { apiKey: 'sealed-k2', scopes: ['orders:read'], storeIds: [], at: T0 + 3 }))).toMatchObject({
        outcome: 'ok',
        record: { status: 'connecting', keyInvalidAt: null, keyGeneration: 2, apiKey: 'sealed-k2', scopes: ['orders:read'], storeIds: [] },
      });
      expect(await store.markKeyInvalid('a', 1, T0 + 4)).toBe(false);
      expect(await store.markKeyInvalid('nobody', 1, T0 + 4)).toBe(false);
    });

    it('disconnects in two steps, erasing the key and every secret, and is not begun twice', async () => {
      await store.beginConnect(intent('a'));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.finishConnect('a', 'ep-1', T0);
      expect(await store.finishDisconnect('a', T0 + 1)).toBeNull(); // not begun
      expect(await store.beginDisconnect('a', T0 + 1)).toMatchObject({ status: 'disconnecting', apiKey: 'sealed-key-of-a' });
      expect(await store.finishDisconnect('a', T0 + 2)).toMatchObject({ status: 'disconnected', apiKey: null, endpointId: null, disconnectedAt: T0 + 2 });
      expect(await store.secrets('a')).toHaveLength(0);
      expect(await store.beginDisconnect('a', T0 + 3)).toBeNull();
      expect(await store.beginDisconnect('nobody', T0 + 3)).toBeNull();
      // Its merchant is free again.
      expect(await store.beginConnect(intent('b'))).toMatchObject({ outcome: 'ok' });
    });

    it('lists in id order, by status, in pages, and counts by status', async () => {
      for (const [id, merchantId] of [['t-03', 'm3'], ['t-01', 'm1'], ['T-02', 'm2'], ['t-04', 'm4']] as const) await store.beginConnect(intent(id, { merchantId }));
      await store.finishConnect('t-01', 'e', T0);
      await store.finishConnect('t-04', 'e', T0);
      await store.markKeyInvalid('t-04', 1, T0);
      const all = await store.list({ limit: 10 });
      expect(all.map((t) => t.id)).toEqual(['T-02', 't-01', 't-03', 't-04']);
      expect((await store.list({ limit: 2 })).map((t) => t.id)).toEqual(['T-02', 't-01']);
      expect((await store.list({ limit: 2, after: 't-01' })).map((t) => t.id)).toEqual(['t-03', 't-04']);
      expect((await store.list({ limit: 10, statuses: ['connecting'] })).map((t) => t.id)).toEqual(['T-02', 't-03']);
      expect((await store.list({ limit: 10, statuses: ['active', 'key_invalid'], after: 'T-02' })).map((t) => t.id)).toEqual(['t-01', 't-04']);
      expect(await store.countByStatus()).toEqual({ connecting: 2, active: 1, key_invalid: 1 });
    });

    it('walks every sealed value in pages (a key change\'s old key too) and reseals one only if it did not change meanwhile', async () => {
      await store.beginConnect(intent('a'));
      await store.beginConnect(intent('b', { merchantId: M2 }));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.finishConnect('a', 'ep-1', T0);
      await store.beginConnect(intent('a', { apiKey: 'sealed-k2', at: T0 + 1 }));
      const first = await store.sealedValues(null, 2);
      expect(first).toEqual([
        { tenantId: 'a', endpointId: null, sealed: 'sealed-k2' },
        { tenantId: 'a', endpointId: null, sealed: 'sealed-key-of-a', retiring: true },
      ]);
      const second = await store.sealedValues(first[1]!, 2);
      expect(second).toEqual([
        { tenantId: 'a', endpointId: 'ep-1', sealed: 'sealed-1' },
        { tenantId: 'b', endpointId: null, sealed: 'sealed-key-of-b' },
      ]);
      expect(await store.sealedValues(second[1]!, 2)).toEqual([]);
      expect(await store.reseal(first[0]!, 'resealed-key')).toBe(true);
      expect(await store.reseal(first[0]!, 'again')).toBe(false);
      expect(await store.reseal(first[1]!, 'resealed-old-key')).toBe(true);
      expect(await store.reseal(second[0]!, 'resealed-1')).toBe(true);
      expect((await store.get('a'))?.apiKey).toBe('resealed-key');
      expect((await store.rotation('a'))?.retiringKey).toBe('resealed-old-key');
      expect((await store.secrets('a'))[0]?.secret).toBe('resealed-1');
    });

    it('records one rotation per tenant, step by step, by its owner only, and drops it when finished or disconnected', async () => {
      await store.beginConnect(intent('a'));
      await store.finishConnect('a', 'ep-1', T0);
      expect(await store.rotation('a')).toBeNull();
      expect(await store.advanceRotation('a', 'verifying', 'ep-2', T0, 'call-1')).toBeNull(); // none under way
      expect(await store.claimRotation('a', { owner: owner('call-1'), at: T0 })).toBeNull();
      const changesBefore = (await store.secretChanges(0, 100)).latest;
      const begun = await store.beginRotation('a', 'ep-1', T0 + 1, owner('call-1', T0 + 1));
      expect(begun).toEqual({
        tenantId: 'a',
        kind: 'secret',
        step: 'registering',
        oldEndpointId: 'ep-1',
        newEndpointId: null,
        retiringKey: null,
        owner: owner('call-1', T0 + 1),
        startedAt: T0 + 1,
        updatedAt: T0 + 1,
      });
      // Receivers see a rotation under way, and are told to read the tenant again.
      expect((await store.get('a'))?.rotatingSince).toBe(T0 + 1);
      const afterBegin = await store.secretChanges(changesBefore, 100);
      expect(afterBegin.changes.map((change) => change.tenantId)).toEqual(['a']);
      // A second begin finds the one under way, owned by the first call, and changes nothing.
      expect(await store.beginRotation('a', 'ep-9', T0 + 2, owner('call-2', T0 + 2))).toEqual(begun);
      expect((await store.secretChanges(afterBegin.latest, 100)).changes).toEqual([]);
      // Only its owner moves it on.
      expect(await store.advanceRotation('a', 'verifying', 'ep-2', T0 + 3, 'call-2')).toBeNull();
      expect(await store.advanceRotation('a', 'verifying', 'ep-2', T0 + 3, 'call-1')).toMatchObject({ step: 'verifying', oldEndpointId: 'ep-1', newEndpointId: 'ep-2', startedAt: T0 + 1, updatedAt: T0 + 3 });
      // Another call cannot take it while the lease holds, unless it names the owner as gone.
      expect(await store.claimRotation('a', { owner: owner('call-2', T0 + 4), at: T0 + 4 })).toMatchObject({ owner: { token: 'call-1' } });
      expect(await store.renewRotation('a', 'call-2', T0 + 99_000)).toBe(false);
      expect(await store.renewRotation('a', 'call-1', T0 + 70_000)).toBe(true);
      expect(await store.claimRotation('a', { owner: owner('call-2', T0 + 65_000), at: T0 + 65_000 })).toMatchObject({ owner: { token: 'call-1', leaseUntil: T0 + 70_000 } });
      expect(await store.claimRotation('a', { owner: owner('call-2', T0 + 5), at: T0 + 5, replacing: 'call-1' })).toMatchObject({ step: 'verifying', owner: owner('call-2', T0 + 5) });
      // An owner that stops lets it go; the next call takes it; a lease that ran out is taken too.
      await store.releaseRotation('a', 'call-1'); // not the owner: nothing
      expect((await store.rotation('a'))?.owner?.token).toBe('call-2');
      await store.releaseRotation('a', 'call-2');
      expect((await store.rotation('a'))?.owner).toBeNull();
      expect(await store.claimRotation('a', { owner: owner('call-3', T0 + 6), at: T0 + 6 })).toMatchObject({ owner: { token: 'call-3' } });
      expect(await store.claimRotation('a', { owner: owner('call-4', T0 + 6 + LEASE), at: T0 + 6 + LEASE })).toMatchObject({ owner: { token: 'call-4' } });
      expect(await store.advanceRotation('a', 'retiring', 'ep-2', T0 + 7, 'call-4')).toMatchObject({ step: 'retiring', newEndpointId: 'ep-2' });
      expect(await store.rotation('b')).toBeNull();
      expect(await store.finishRotation('a', 'call-3')).toBe(false);
      expect(await store.finishRotation('a', 'call-4')).toBe(true);
      expect(await store.rotation('a')).toBeNull();
      expect((await store.get('a'))?.rotatingSince).toBeNull();
      expect((await store.secretChanges(afterBegin.latest, 100)).changes.map((change) => change.tenantId)).toEqual(['a']);
      await store.beginRotation('a', 'ep-2', T0 + 8, owner('call-5', T0 + 8));
      await store.beginDisconnect('a', T0 + 9);
      await store.finishDisconnect('a', T0 + 10);
      expect(await store.rotation('a')).toBeNull();
    });

    it('keeps named meta values', async () => {
      expect(await store.readMeta('key_check')).toBeNull();
      await store.writeMeta('key_check', 'one');
      await store.writeMeta('key_check', 'two');
      expect(await store.readMeta('key_check')).toBe('two');
    });
  });
}
