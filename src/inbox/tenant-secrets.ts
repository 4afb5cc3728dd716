/**
 * A receiver's cache of each tenant's webhook secrets (`createInbox({ tenants })`): read from the
 * tenants registry once per tenant, never a scan over tenants, and forgotten when they change: at
 * once when the registry of this process changes them (it tells its receivers), and within one poll
 * (`SECRETS_POLL_MS`) when another process's does: each process reads the registry's numbered
 * changes (`TenantStore.secretChanges`) and forgets the tenants they name. A delivery no
 * cached secret verifies reads its tenant again (at most ten times a second per tenant), so a secret
 * added a moment ago is found without waiting for the poll.
 */
import type { Clock } from '../clock.ts';
import type { TenantsReceiving } from '../tenants/receiving.ts';
import { SECRET_CHANGES_KEPT } from '../tenants/store.ts';
import type { Addressee, KnownSecret } from './addressee.ts';

/** How often each process asks the registry which tenants' secrets changed. */
export const SECRETS_POLL_MS = 1000;
/** The least time between two reads of one tenant forced by deliveries its secrets did not verify (forged requests cannot flood the registry). */
export const FORCED_READ_EVERY_MS = 100;
/** Changes are read again this far below the last one seen: Postgres may commit numbers out of order. */
const CHANGES_LAG = 100;
const CHANGES_PAGE = 1000;
/** Tenants kept (least recently received first out): far more than any one process serves. */
export const MAX_CACHED_TENANTS = 100_000;

/** What a receiver knows of one tenant: `null` for an unknown, disconnecting or disconnected one. */
export type CachedTenant = Addressee | null;

interface Entry {
  read: Promise<CachedTenant>;
  at: number;
}

export class TenantSecretsCache {
  readonly #receiving: TenantsReceiving;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  readonly #entries = new Map<string, Entry>();
  readonly #marking = new Set<string>();
  #cursor: Promise<number> | undefined;
  #seen = new Set<number>();
  #cancelPoll: (() => void) | undefined;
  readonly #unsubscribe: () => void;
  #closed = false;

  constructor(receiving: TenantsReceiving, clock: Clock, onError: (error: unknown) => void) {
    this.#receiving = receiving;
    this.#clock = clock;
    this.#onError = onError;
    // This process's own registry changes: forgotten at once.
    this.#unsubscribe = receiving.subscribe((tenant) => this.#entries.delete(tenant));
  }

  /** The tenant's secrets, from the cache or read once (concurrent deliveries share one read). */
  async get(tenant: string): Promise<CachedTenant> {
    const found = this.#entries.get(tenant);
    if (found) {
      // Most recently used last: the least recently received tenant is the first to go.
      this.#entries.delete(tenant);
      this.#entries.set(tenant, found);
      return found.read;
    }
    return this.#read(tenant);
  }

  /**
   * The tenant read again, after a delivery its cached secrets did not verify (or, `force`, while a
   * held delivery waits for a rotation's new secret); not more than every FORCED_READ_EVERY_MS otherwise.
   */
  async reread(tenant: string, force = false): Promise<CachedTenant> {
    const found = this.#entries.get(tenant);
    if (found && !force && this.#clock.now() - found.at < FORCED_READ_EVERY_MS) return found.read;
    return this.#read(tenant);
  }

  /** Records, once, that a delivery verified with this secret (a rotation's step 2 waits on it). */
  markVerified(tenant: string, secret: KnownSecret): void {
    if (secret.verifiedAt !== null) return;
    const key = `${tenant}\n${secret.id}`;
    if (this.#marking.has(key)) return;
    this.#marking.add(key);
    const at = this.#clock.now();
    this.#receiving.markVerified(tenant, secret.id, at).then(
      () => {
        // The cached secret (the same object) is marked, whichever process recorded it first.
        secret.verifiedAt = at;
        this.#marking.delete(key);
      },
      (error: unknown) => {
        this.#marking.delete(key);
        this.#onError(error);
      },
    );
  }

  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    this.#cancelPoll?.();
    this.#entries.clear();
  }

  async #read(tenant: string): Promise<CachedTenant> {
    // Changes numbered after this point are seen by the poll: nothing read here can be missed.
    await this.#started();
    const read = this.#receiving.read(tenant).then((state): CachedTenant =>
      state === null
        ? null
        : {
            tenant,
            rotating: state.rotating,
            secrets: state.secrets.map((secret) => ({ id: secret.endpointId, secret: secret.secret, createdAt: secret.createdAt, verifiedAt: secret.verifiedAt })),
          },
    );
    const entry: Entry = { read, at: this.#clock.now() };
    this.#entries.delete(tenant);
    this.#entries.set(tenant, entry);
    if (this.#entries.size > MAX_CACHED_TENANTS) this.#entries.delete(this.#entries.keys().next().value!);
    // A failed read is not kept: the next delivery reads again.
    entry.read.catch(() => {
      if (this.#entries.get(tenant) === entry) this.#entries.delete(tenant);
    });
    return entry.read;
  }

  /** The changes' number when this process began to cache, and the poll after it. */
  #started(): Promise<number> {
    this.#cursor ??= this.#receiving.changes(Number.MAX_SAFE_INTEGER, 1).then(
      ({ latest }) => {
        this.#schedule(latest);
        return latest;
      },
      (error: unknown) => {
        this.#cursor = undefined;
        throw error;
      },
    );
    return this.#cursor;
  }

  #schedule(cursor: number): void {
    if (this.#closed) return;
    this.#cancelPoll = this.#clock.setTimeout(() => {
      this.#poll(cursor).then(
        (next) => this.#schedule(next),
        (error: unknown) => {
          this.#onError(error);
          this.#schedule(cursor);
        },
      );
    }, SECRETS_POLL_MS);
  }

  /** Forgets the tenants changed since `cursor` (all of them, after falling too far behind); the new cursor. */
  async #poll(cursor: number): Promise<number> {
    let after = Math.max(0, cursor - CHANGES_LAG);
    let latestSeen = cursor;
    for (;;) {
      const { changes, latest } = await this.#receiving.changes(after, CHANGES_PAGE);
      if (latest - cursor > SECRET_CHANGES_KEPT - CHANGES_LAG - CHANGES_PAGE) {
        // Further behind than the registry keeps: forget everyone.
        this.#entries.clear();
        this.#seen = new Set();
        return latest;
      }
      for (const change of changes) {
        latestSeen = Math.max(latestSeen, change.seq);
        if (this.#seen.has(change.seq)) continue;
        this.#seen.add(change.seq);
        this.#entries.delete(change.tenantId);
      }
      if (changes.length < CHANGES_PAGE) break;
      after = changes.at(-1)!.seq;
    }
    for (const seq of this.#seen) if (seq <= latestSeen - CHANGES_LAG) this.#seen.delete(seq);
    return latestSeen;
  }
}
