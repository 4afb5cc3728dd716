/**
 * A rotation needs an owner (a secret rotation, or the key change of `updateKey`): one call runs it,
 * holding a lease in the store that it renews while it runs, as the sync's runs do. A second call
 * while the owner is alive is refused (`TenantRotationError`, `in_progress`) instead of running
 * the steps again; a rotation whose owner died is taken over at once when its process was on this
 * host and is gone, else once its lease ran out. A call that fails gives the rotation up (it stays
 * recorded, for the next call to resume).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { TenantRotationError } from '../errors/tenant-errors.ts';
import { holderIsGone, leaseHost } from '../storage/lease-holder.ts';
import type { TenantRotationOwner, TenantRotationRecord, TenantStore } from './store.ts';

/** How long an owner's lease holds without renewal: a rotation whose process died elsewhere waits this long. */
export const ROTATION_LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

/** One call's ownership of a tenant's rotation. */
export class RotationLease {
  readonly token = randomUUID();
  readonly #store: TenantStore;
  readonly #clock: Clock;
  readonly #tenantId: string;

  constructor(store: TenantStore, clock: Clock, tenantId: string) {
    this.#store = store;
    this.#clock = clock;
    this.#tenantId = tenantId;
  }

  /** This call as the store records an owner, its lease starting now. */
  owner(): TenantRotationOwner {
    return { token: this.token, host: leaseHost(), pid: process.pid, leaseUntil: this.#clock.now() + ROTATION_LEASE_MS };
  }

  /** The token of `rotation`'s owner when its process is known to be gone (to replace it at once). */
  static goneOwner(rotation: TenantRotationRecord): string | undefined {
    return rotation.owner !== null && holderIsGone(rotation.owner) ? rotation.owner.token : undefined;
  }

  /**
   * Takes the tenant's rotation under way (its owner's lease ended, or its process is gone);
   * `null` when none is under way. Throws `in_progress` when a live call owns it.
   */
  async claim(): Promise<TenantRotationRecord | null> {
    const store = this.#store;
    let rotation = await store.claimRotation(this.#tenantId, { owner: this.owner(), at: this.#clock.now() });
    const gone = rotation === null ? undefined : RotationLease.goneOwner(rotation);
    if (gone !== undefined && gone !== this.token) rotation = await store.claimRotation(this.#tenantId, { owner: this.owner(), at: this.#clock.now(), replacing: gone });
    if (rotation !== null && !this.owns(rotation)) throw rotationInProgress(this.#tenantId, rotation);
    return rotation;
  }

  owns(rotation: TenantRotationRecord): boolean {
    return rotation.owner?.token === this.token;
  }

  /**
   * Runs `work` while renewing the lease; when it fails, the rotation is given up (it stays, for
   * the next call) and the error thrown again.
   */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    let cancel = () => {};
    let stopped = false;
    const renew = () => {
      cancel = this.#clock.setTimeout(() => {
        this.#store.renewRotation(this.#tenantId, this.token, this.#clock.now() + ROTATION_LEASE_MS).then(
          (held) => {
            // A lost lease shows at the next step: the store refuses to advance it.
            if (held && !stopped) renew();
          },
          () => {
            // The store is unreachable for now: try at the next tick, the lease lasts a minute.
            if (!stopped) renew();
          },
        );
      }, RENEW_EVERY_MS);
    };
    renew();
    try {
      return await work();
    } catch (error) {
      await this.#store.releaseRotation(this.#tenantId, this.token).catch(() => {});
      throw error;
    } finally {
      stopped = true;
      cancel();
    }
  }
}

/** The refusal of a call that found a rotation of the tenant owned by another live call. */
export function rotationInProgress(tenantId: string, rotation: TenantRotationRecord): TenantRotationError {
  const what = rotation.kind === 'key' ? 'a key change (updateKey, or connect with another key)' : 'a webhook secret rotation';
  const where = rotation.owner === null ? '' : ` by process ${rotation.owner.pid} on ${rotation.owner.host.split(' ')[0]}`;
  return new TenantRotationError(
    tenantId,
    'in_progress',
    `${what} of this tenant is under way${where} since ${new Date(rotation.startedAt).toISOString()} (step ${rotation.step}); nothing was done. ` +
      'Call again once it ended (a rotation whose process stopped is taken over once its lease ends, within a minute)',
  );
}
