/**
 * What `TenantStore.beginConnect` decides, from what it read inside its transaction: the rules of
 * the contract in one place, so that every store (SQLite, Postgres, a user's own) writes the same
 * thing. A store reads the tenant, its rotation and another tenant holding the merchant, asks
 * {@link planConnect}, and writes what the plan says in the same transaction.
 */
import type { ConnectIntent, TenantRecord, TenantRotationRecord, TenantStatus } from './store.ts';
import { mayTake } from './store-rows.ts';

/** The key change a plan begins: a `key` rotation at `registering`, owned by the intent's owner. */
export interface PlannedKeyChange {
  oldEndpointId: string;
  /** The sealed key the old endpoint belongs to (`null`: already refused, never sent again). */
  retiringKey: string | null;
}

export type ConnectPlan =
  | { outcome: 'merchant_mismatch'; merchantId: string }
  | { outcome: 'merchant_taken'; existingTenantId: string }
  | { outcome: 'disconnecting' }
  | { outcome: 'in_progress'; rotation: TenantRotationRecord }
  /** Claim the unfinished key change (nothing else is written). */
  | { outcome: 'key_change_pending'; rotation: TenantRotationRecord }
  | {
      outcome: 'write';
      status: TenantStatus;
      keyGeneration: number;
      connectedAt: number | null;
      keyInvalidAt: number | null;
      /** `begin`: a new key change; `claim`: the unfinished one is the caller's; `none`: the rotation (if any) is left as it is. */
      rotation: { action: 'begin'; change: PlannedKeyChange } | { action: 'claim' } | { action: 'none' };
    };

/**
 * The plan for `intent`, given the tenant as stored (`current`), its rotation under way, and the
 * first other tenant id (not disconnected) holding the same merchant.
 */
export function planConnect(intent: ConnectIntent, current: TenantRecord | null, rotation: TenantRotationRecord | null, otherTenantId: string | null): ConnectPlan {
  const fresh = current === null || current.status === 'disconnected';
  if (!fresh && current.merchantId !== intent.merchantId) return { outcome: 'merchant_mismatch', merchantId: current.merchantId };
  if (!intent.allowSameMerchant && otherTenantId !== null) return { outcome: 'merchant_taken', existingTenantId: otherTenantId };
  if (current?.status === 'disconnecting') return { outcome: 'disconnecting' };
  if (rotation !== null && !mayTake(rotation.owner, { owner: intent.owner, at: intent.at, replacing: intent.replacing })) return { outcome: 'in_progress', rotation };
  if (fresh) {
    return { outcome: 'write', status: 'connecting', keyGeneration: current === null ? 1 : current.keyGeneration + 1, connectedAt: null, keyInvalidAt: null, rotation: { action: 'none' } };
  }
  const keyChange = rotation?.kind === 'key' ? rotation : null;
  if (!intent.keyChanged) {
    return {
      outcome: 'write',
      status: current.status,
      keyGeneration: current.keyGeneration,
      connectedAt: current.connectedAt,
      keyInvalidAt: current.keyInvalidAt,
      rotation: keyChange ? { action: 'claim' } : { action: 'none' },
    };
  }
  // The key the unfinished change moved to may still have an endpoint delivering: it is finished
  // (or found refused) before another key replaces it, so that no key's endpoint is forgotten.
  if (keyChange && current.status !== 'key_invalid') return { outcome: 'key_change_pending', rotation: keyChange };
  const invalid = current.status === 'key_invalid';
  return {
    outcome: 'write',
    status: invalid ? (current.connectedAt === null ? 'connecting' : 'active') : current.status,
    keyGeneration: current.keyGeneration + 1,
    connectedAt: current.connectedAt,
    keyInvalidAt: null,
    rotation: {
      action: 'begin',
      change: {
        // A rotation under way is folded in: a secret rotation's endpoints are the old key's; an
        // unfinished key change keeps its older key (the key it moved to was refused).
        oldEndpointId: rotation?.oldEndpointId ?? current.endpointId ?? '',
        retiringKey: keyChange ? keyChange.retiringKey : invalid ? null : current.apiKey,
      },
    },
  };
}
