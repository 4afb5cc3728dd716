/**
 * What a receiver for many merchants (`createInbox({ tenants })` in `integration-sdk/inbox`) reads of
 * the tenants registry: a tenant's webhook secrets, opened, and whether a rotation is in progress;
 * the record that a secret verified a delivery; the numbered changes that tell every process which
 * tenants to read again. Reached through a registered symbol on the registry, so that the inbox
 * entry never loads the tenants module (its client, its budget) and two copies of the package
 * still find each other.
 */
import type { SecretChanges } from './store.ts';

export type { SecretChanges };

/** One secret a tenant's deliveries may be signed with. Holds a secret: never logged. */
export interface TenantReceivingSecret {
  /** The endpoint it belongs to: the opaque, non-secret id an entry keeps of the secret that verified it. */
  endpointId: string;
  secret: string;
  createdAt: number;
  /** When a receiver first verified a delivery with it; `null` until then. */
  verifiedAt: number | null;
}

/** What a receiver accepts for one tenant. */
export interface TenantReceivingState {
  /** Newest first; two while a rotation overlaps its endpoints. */
  secrets: TenantReceivingSecret[];
  /**
   * A rotation is in progress (or the tenant is still connecting): a new endpoint may deliver before
   * its secret is stored, so a delivery no secret verifies is held and the secrets read again.
   */
  rotating: boolean;
}

/** The registry's side of receiving. */
export interface TenantsReceiving {
  /** `null` for an unknown, disconnecting or disconnected tenant (the receiver answers 404). Reads the store. */
  read(tenantId: string): Promise<TenantReceivingState | null>;
  /** Records the first verification with the secret of `endpointId` (a rotation waits on it); whether this call recorded it. */
  markVerified(tenantId: string, endpointId: string, at: number): Promise<boolean>;
  /** See `TenantStore.secretChanges`. */
  changes(after: number, limit: number): Promise<SecretChanges>;
  /** Tells `listener` at once about each change this registry (this process) makes; returns the unsubscribe. */
  subscribe(listener: (tenantId: string) => void): () => void;
}

/** The store methods that change what a receiver accepts for a tenant, and where their tenant id is. */
const CHANGING: Readonly<Record<string, (args: unknown[]) => unknown>> = {
  beginConnect: (args) => (args[0] as { id: string }).id,
  finishConnect: (args) => args[0],
  putSecret: (args) => (args[0] as { tenantId: string }).tenantId,
  deleteSecret: (args) => args[0],
  beginDisconnect: (args) => args[0],
  finishDisconnect: (args) => args[0],
  setRotating: (args) => args[0],
  // A rotation's start and end set and clear rotatingSince (src/tenants/rotate.ts).
  beginRotation: (args) => args[0],
  finishRotation: (args) => args[0],
};

/**
 * The registry's store, telling `changed` after each write that may change what a receiver
 * accepts for a tenant: receivers in this process forget that tenant at once, not at their next
 * poll of the numbered changes.
 */
export function watchedStore<S extends object>(store: S, changed: (tenantId: string) => void): S {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const tenantOf = typeof property === 'string' ? CHANGING[property] : undefined;
      if (!tenantOf) return value.bind(target);
      return async (...args: unknown[]) => {
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          const tenantId = tenantOf(args);
          if (typeof tenantId === 'string') changed(tenantId);
        }
      };
    },
  });
}

const TENANTS_RECEIVING = Symbol.for('integration-sdk.tenants.receiving');

/** Called by `createTenants`. */
export function attachTenantsReceiving(tenants: object, receiving: TenantsReceiving): void {
  Object.defineProperty(tenants, TENANTS_RECEIVING, { value: receiving, enumerable: false });
}

/** The receiving side of a registry made by `createTenants`; `undefined` for anything else. */
export function tenantsReceiving(tenants: unknown): TenantsReceiving | undefined {
  if (typeof tenants !== 'object' || tenants === null) return undefined;
  const found = (tenants as Record<symbol, unknown>)[TENANTS_RECEIVING];
  return typeof found === 'object' && found !== null ? (found as TenantsReceiving) : undefined;
}
