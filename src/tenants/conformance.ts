import type { ConformanceTestApi } from '../storage/conformance-api.ts';
import type { ConnectIntent, TenantStore } from './store.ts';

const T0 = 1_800_000_000_000;
const M1 = '3f6c1e2a-8d4b-4c7e-9a10-5b2f7d9e4c01';
const M2 = '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';

function intent(id: string, overrides: Partial<ConnectIntent> = {}): ConnectIntent {
  return { id, merchantId: M1, storeIds: ['s-1'], scopes: ['orders:read', 'webhooks:manage'], apiKey: `sealed-key-of-${id}`, keyChanged: true, allowSameMerchant: false, at: T0, ...overrides };
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
      expect(await store.beginConnect(intent('a', { apiKey: 'another-sealed-key' }))).toMatchObject({ record: { keyGeneration: 2, apiKey: 'another-sealed-key' } });
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

    it('marks key_invalid only for the key generation that met the 401, and a new key restores it', async () => {
      await store.beginConnect(intent('a'));
      expect(await store.markKeyInvalid('a', 1, T0 + 1)).toBe(false); // still connecting
      await store.finishConnect('a', 'ep-1', T0 + 1);
      expect(await store.markKeyInvalid('a', 2, T0 + 2)).toBe(false);
      expect(await store.markKeyInvalid('a', 1, T0 + 3)).toBe(true);
      expect(await store.get('a')).toMatchObject({ status: 'key_invalid', keyInvalidAt: T0 + 3 });
      expect(await store.markKeyInvalid('a', 1, T0 + 4)).toBe(false);
      const replaced = await store.replaceKey({ id: 'a', apiKey: 'sealed-new', scopes: ['orders:read'], storeIds: [], at: T0 + 5 });
      expect(replaced).toMatchObject({ status: 'active', keyInvalidAt: null, keyGeneration: 2, apiKey: 'sealed-new', scopes: ['orders:read'], storeIds: [] });
      expect(await store.markKeyInvalid('a', 1, T0 + 6)).toBe(false);
      expect(await store.replaceKey({ id: 'nobody', apiKey: 'x', scopes: [], storeIds: [], at: T0 })).toBeNull();
    });

    it('disconnects in two steps, erasing the key and every secret, and is not begun twice', async () => {
      await store.beginConnect(intent('a'));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      await store.finishConnect('a', 'ep-1', T0);
      expect(await store.finishDisconnect('a', T0 + 1)).toBeNull(); // not begun
      expect(await store.beginDisconnect('a', T0 + 1)).toMatchObject({ status: 'disconnecting', apiKey: 'sealed-key-of-a' });
      expect(await store.replaceKey({ id: 'a', apiKey: 'x', scopes: [], storeIds: [], at: T0 })).toBeNull();
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

    it('walks every sealed value in pages and reseals one only if it did not change meanwhile', async () => {
      await store.beginConnect(intent('a'));
      await store.beginConnect(intent('b', { merchantId: M2 }));
      await store.putSecret({ tenantId: 'a', endpointId: 'ep-1', secret: 'sealed-1', createdAt: T0 });
      const first = await store.sealedValues(null, 2);
      expect(first).toEqual([
        { tenantId: 'a', endpointId: null, sealed: 'sealed-key-of-a' },
        { tenantId: 'a', endpointId: 'ep-1', sealed: 'sealed-1' },
      ]);
      expect(await store.sealedValues(first[1]!, 2)).toEqual([{ tenantId: 'b', endpointId: null, sealed: 'sealed-key-of-b' }]);
      expect(await store.reseal(first[0]!, 'resealed-key')).toBe(true);
      expect(await store.reseal(first[0]!, 'again')).toBe(false);
      expect(await store.reseal(first[1]!, 'resealed-1')).toBe(true);
      expect((await store.get('a'))?.apiKey).toBe('resealed-key');
      expect((await store.secrets('a'))[0]?.secret).toBe('resealed-1');
    });

    it('records one rotation per tenant, step by step, and drops it when finished or disconnected', async () => {
      await store.beginConnect(intent('a'));
      await store.finishConnect('a', 'ep-1', T0);
      expect(await store.rotation('a')).toBeNull();
      expect(await store.advanceRotation('a', 'verifying', 'ep-2', T0)).toBeNull(); // none under way
      const changesBefore = (await store.secretChanges(0, 100)).latest;
      const begun = await store.beginRotation('a', 'ep-1', T0 + 1);
      expect(begun).toEqual({ tenantId: 'a', step: 'registering', oldEndpointId: 'ep-1', newEndpointId: null, startedAt: T0 + 1, updatedAt: T0 + 1 });
      // Receivers see a rotation under way, and are told to read the tenant again.
      expect((await store.get('a'))?.rotatingSince).toBe(T0 + 1);
      const afterBegin = await store.secretChanges(changesBefore, 100);
      expect(afterBegin.changes.map((change) => change.tenantId)).toEqual(['a']);
      // A second begin (a resumed call) finds the one under way and changes nothing.
      expect(await store.beginRotation('a', 'ep-9', T0 + 2)).toEqual(begun);
      expect((await store.secretChanges(afterBegin.latest, 100)).changes).toEqual([]);
      expect(await store.advanceRotation('a', 'verifying', 'ep-2', T0 + 3)).toMatchObject({ step: 'verifying', oldEndpointId: 'ep-1', newEndpointId: 'ep-2', startedAt: T0 + 1, updatedAt: T0 + 3 });
      expect(await store.advanceRotation('a', 'retiring', 'ep-2', T0 + 4)).toMatchObject({ step: 'retiring', newEndpointId: 'ep-2' });
      expect(await store.rotation('b')).toBeNull();
      await store.finishRotation('a');
      expect(await store.rotation('a')).toBeNull();
      expect((await store.get('a'))?.rotatingSince).toBeNull();
      expect((await store.secretChanges(afterBegin.latest, 100)).changes.map((change) => change.tenantId)).toEqual(['a']);
      await store.beginRotation('a', 'ep-2', T0 + 5);
      await store.beginDisconnect('a', T0 + 6);
      await store.finishDisconnect('a', T0 + 7);
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
