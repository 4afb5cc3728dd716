import { randomBytes, randomUUID } from 'node:crypto';
import type { Scope } from '../schemas/health.ts';
import type { Issue } from './http/sandbox-error.ts';
import type { ApiKeyRecord, SandboxState } from './state.ts';
import { Checker, isRecord, typeOf } from './validate.ts';

const ALL_SCOPES: readonly Scope[] = ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'];

/**
 * One more key of a merchant: every scope and every store of its merchant unless told. `storeIds`
 * are ids of the merchant's stores, or indexes into its `stores` (0 = its first store).
 */
export interface SandboxKeySpec {
  scopes?: Scope[];
  storeIds?: Array<string | number>;
}

/** A merchant to add: `stores` (a count or names; default 1) and `keys` (a count or specs; default 1 full key). */
export interface SandboxMerchantSpec {
  stores?: number | Array<{ name?: string }>;
  keys?: number | SandboxKeySpec[];
}

/** A key as the sandbox hands it to the developer (the secret on purpose: it is a local emulator). */
export interface SandboxMerchantKey {
  apiKey: string;
  keyId: string;
  scopes: Scope[];
  /** Empty means every store of the merchant. */
  storeIds: string[];
}

/** A merchant added to the sandbox, with its stores and keys. */
export interface SandboxMerchant {
  merchantId: string;
  stores: Array<{ id: string; name: string }>;
  storeIds: string[];
  keys: SandboxMerchantKey[];
}

const MAX_STORES = 50;
const MAX_KEYS = 20;

/** Checks a merchant spec (from options or a control's body); returns its issues, none when usable. */
export function merchantSpecIssues(spec: unknown, path = ''): Issue[] {
  const check = new Checker();
  const at = (name: string) => (path === '' ? name : `${path}.${name}`);
  if (spec === undefined) return [];
  if (!isRecord(spec)) return [{ path: path || '', message: `must be an object with stores and keys, got ${typeOf(spec)}` }];
  const { stores, keys } = spec;
  if (stores !== undefined && !(Number.isInteger(stores) && (stores as number) >= 1 && (stores as number) <= MAX_STORES) && !(Array.isArray(stores) && stores.length >= 1 && stores.length <= MAX_STORES)) {
    check.add(at('stores'), `must be a count of stores (1–${MAX_STORES}) or an array of { name }`);
  }
  if (keys !== undefined && !(Number.isInteger(keys) && (keys as number) >= 1 && (keys as number) <= MAX_KEYS) && !(Array.isArray(keys) && keys.length >= 1 && keys.length <= MAX_KEYS)) {
    check.add(at('keys'), `must be a count of keys (1–${MAX_KEYS}) or an array of { scopes, storeIds }`);
  }
  if (Array.isArray(keys)) keys.forEach((key, index) => check.issues.push(...keySpecIssues(key, at(`keys[${index}]`))));
  return check.issues;
}

export function keySpecIssues(spec: unknown, path: string): Issue[] {
  if (spec === undefined) return [];
  if (!isRecord(spec)) return [{ path, message: `must be an object with scopes and storeIds, got ${typeOf(spec)}` }];
  const issues: Issue[] = [];
  if (spec.scopes !== undefined && !(Array.isArray(spec.scopes) && spec.scopes.every((scope) => (ALL_SCOPES as readonly unknown[]).includes(scope)))) {
    issues.push({ path: `${path}.scopes`, message: `must be an array of ${ALL_SCOPES.join(', ')}` });
  }
  if (spec.storeIds !== undefined && !(Array.isArray(spec.storeIds) && spec.storeIds.every((id) => typeof id === 'string' || Number.isInteger(id)))) {
    issues.push({ path: `${path}.storeIds`, message: 'must be an array of store ids or store indexes' });
  }
  return issues;
}

/** Adds a merchant with fresh stores and keys (spec already checked). */
export function addMerchant(state: SandboxState, spec: SandboxMerchantSpec = {}): SandboxMerchant {
  const merchantId = randomUUID();
  const count = state.merchants.size + 1;
  const names: Array<{ name?: string }> = typeof spec.stores === 'number' || spec.stores === undefined ? Array.from({ length: spec.stores ?? 1 }, () => ({})) : spec.stores;
  const stores = names.map((store, index) => ({ id: randomUUID(), name: store.name ?? `Merchant ${count} store ${index + 1}` }));
  state.merchants.set(merchantId, { id: merchantId, stores });
  for (const store of stores) {
    state.storeIds.push(store.id);
    state.storeMerchants.set(store.id, merchantId);
  }
  const keySpecs = typeof spec.keys === 'number' || spec.keys === undefined ? Array.from({ length: spec.keys ?? 1 }, () => ({})) : spec.keys;
  const keys = keySpecs.map((keySpec) => addKey(state, merchantId, keySpec));
  return { merchantId, stores: stores.map((s) => ({ ...s })), storeIds: stores.map((s) => s.id), keys };
}

/** Adds a key to a merchant; throws a list of issues when a store is not the merchant's. */
export function addKey(state: SandboxState, merchantId: string, spec: SandboxKeySpec = {}): SandboxMerchantKey {
  const merchant = state.merchants.get(merchantId);
  if (!merchant) throw new RangeError(`no merchant ${merchantId} in this sandbox`);
  const storeIds = (spec.storeIds ?? []).map((ref) => {
    const id = typeof ref === 'number' ? merchant.stores[ref]?.id : ref.toLowerCase();
    if (id === undefined || !merchant.stores.some((store) => store.id === id)) throw new RangeError(`store ${String(ref)} is not a store of merchant ${merchantId}`);
    return id;
  });
  const keyId = `m${randomBytes(6).toString('hex')}`;
  const record: ApiKeyRecord = {
    keyId,
    merchantId,
    apiKey: `service_${keyId}_${randomBytes(16).toString('hex')}`,
    scopes: [...(spec.scopes ?? ALL_SCOPES)],
    storeIds,
    revoked: false,
  };
  state.keys.set(keyId, record);
  return keyView(record);
}

/** The merchants added beside the seeded one, oldest first, with their stores and keys. */
export function merchantViews(state: SandboxState): SandboxMerchant[] {
  const keys = new Map<string, SandboxMerchantKey[]>();
  for (const key of state.keys.values()) keys.set(key.merchantId, [...(keys.get(key.merchantId) ?? []), keyView(key)]);
  return [...state.merchants.values()]
    .filter((merchant) => merchant.id !== state.merchantId)
    .map((merchant) => ({
      merchantId: merchant.id,
      stores: merchant.stores.map((store) => ({ ...store })),
      storeIds: merchant.stores.map((store) => store.id),
      keys: keys.get(merchant.id) ?? [],
    }));
}

export function keyView(key: ApiKeyRecord): SandboxMerchantKey {
  return { apiKey: key.apiKey, keyId: key.keyId, scopes: [...key.scopes], storeIds: [...key.storeIds] };
}

/** Revokes a key by its complete value or its id: its next request answers 401. Whether it existed. */
export function revokeKey(state: SandboxState, keyOrId: string): boolean {
  const key = state.keys.get(keyOrId) ?? [...state.keys.values()].find((k) => k.apiKey === keyOrId);
  if (!key) return false;
  key.revoked = true;
  return true;
}
