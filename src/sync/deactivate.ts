// sync.deactivate: `active: false` for each store an orphan was last sent with, in batches of 500
// through the client's own bulk writes, behind a guard: a failed export never switches the
// catalog off (docs/sync.md).
import type { IntegrationClient } from '../client.ts';
import { ApiError, ConfigurationError } from '../errors/index.ts';
import { stockRules } from '../resources/bulk/item-checks.ts';
import type { CallOptions } from '../transport/types.ts';
import { SyncGuardError } from './errors.ts';
import { Pacer } from './pacer.ts';
import type { SyncKind, SyncState } from './state.ts';
import type { DeactivateOptions, DeactivateResult, SyncOrphan } from './types.ts';

/** Without a confirmation, at most this share of what was acknowledged is deactivated at once. */
export const DEFAULT_MAX_DEACTIVATE_SHARE = 0.1;
const BATCH = 500;

type Orphans = Iterable<SyncOrphan> | AsyncIterable<SyncOrphan>;

export function checkShare(share: unknown, name: string): number | undefined {
  if (share === undefined) return undefined;
  if (typeof share !== 'number' || !(share >= 0 && share <= 1)) throw new ConfigurationError(`${name} must be a number from 0 to 1 (0.1: 10% of what was acknowledged).`);
  return share;
}

/**
 * How many orphans `orphans` holds, and the orphans to go through: a one-shot iterator (a generator)
 * is read into memory; anything else (an array, `sync.orphans()`) is read twice.
 */
async function counted(orphans: Orphans): Promise<{ count: number; each: Orphans }> {
  if (Array.isArray(orphans)) return { count: orphans.length, each: orphans };
  // An iterator whose steps resolve at once never gives the event loop a turn by itself.
  const pacer = new Pacer();
  if (typeof (orphans as { next?: unknown }).next === 'function') {
    const kept: SyncOrphan[] = [];
    for await (const orphan of orphans) {
      kept.push(orphan);
      if (pacer.due) await pacer.pace();
    }
    return { count: kept.length, each: kept };
  }
  let count = 0;
  for await (const _orphan of orphans) {
    count += 1;
    if (pacer.due) await pacer.pace();
  }
  return { count, each: orphans };
}

/** Throws {@link SyncGuardError} unless deactivating `count` orphans is confirmed or plausible. */
async function guard(state: SyncState, scope: string, kind: SyncKind, count: number, options: { confirm?: number; maxDeactivateShare: number }): Promise<void> {
  if (count === 0 || options.confirm === count) return;
  const acknowledged = await state.countAcknowledged(scope, kind);
  const refusal = { kind, count, acknowledged, maxDeactivateShare: options.maxDeactivateShare };
  if (options.confirm !== undefined) throw new SyncGuardError({ ...refusal, reason: 'confirm-mismatch', confirmed: options.confirm });
  const last = await state.lastCompleteRun(scope, kind);
  // An empty export is refused whatever the share: only the exact count confirms it.
  if (last !== null && last.unchanged + last.sent === 0) throw new SyncGuardError({ ...refusal, reason: 'empty-run' });
  if (count > options.maxDeactivateShare * acknowledged) throw new SyncGuardError({ ...refusal, reason: 'share' });
}

export interface DeactivateContext {
  client: IntegrationClient;
  state: SyncState;
  scope: string;
  kind: SyncKind;
  maxDeactivateShare: number;
}

export async function deactivateOrphans(context: DeactivateContext, orphans: Orphans, options: DeactivateOptions = {}): Promise<DeactivateResult> {
  const { confirm, maxDeactivateShare, ...callOptions } = options;
  if (confirm !== undefined && !(Number.isInteger(confirm) && confirm >= 0)) throw new ConfigurationError('deactivate: confirm must be the exact count of orphans to deactivate, a whole number.');
  const share = checkShare(maxDeactivateShare, 'deactivate: maxDeactivateShare') ?? context.maxDeactivateShare;
  const { count, each } = await counted(orphans);
  await guard(context.state, context.scope, context.kind, count, { confirm, maxDeactivateShare: share });

  const outcome: DeactivateResult = { deactivated: 0, skipped: 0, errors: 0, results: [] };
  let batch: SyncOrphan[] = [];
  let taken = 0;
  const pacer = new Pacer();
  for await (const orphan of each) {
    // Read a second time, the state may hold more by now (a run finished meanwhile): never more than judged.
    if (taken++ >= count) break;
    if (pacer.due) await pacer.pace();
    batch.push(orphan);
    if (batch.length >= BATCH) {
      await deactivateBatch(context, batch, callOptions, outcome);
      batch = [];
    }
  }
  await deactivateBatch(context, batch, callOptions, outcome);
  return outcome;
}

async function deactivateBatch(context: DeactivateContext, orphans: SyncOrphan[], callOptions: CallOptions, outcome: DeactivateResult): Promise<void> {
  const { client, state, scope, kind } = context;
  const withStores = orphans.filter((orphan) => orphan.store_ids.length > 0);
  outcome.skipped += orphans.length - withStores.length;
  if (withStores.length === 0) return;
  const failedIds = new Set<string>();
  const fail = (externalId: string, storeId: string | undefined, code: string, message: string) => {
    failedIds.add(externalId);
    outcome.results.push({ external_id: externalId, ...(storeId === undefined ? {} : { store_id: storeId }), error: { code, message } });
  };
  try {
    if (kind === 'catalog') {
      const items = withStores.map((orphan) => ({ external_id: orphan.external_id, stores: orphan.store_ids.map((store_id) => ({ store_id, active: false })) }));
      const result = await client.catalog.upsertProducts(items, callOptions);
      for (const item of result.results) if (item.status === 'error') fail(item.external_id, undefined, item.error?.code ?? 'UNKNOWN', item.error?.message ?? '');
    } else {
      const items = withStores.flatMap((orphan) => orphan.store_ids.map((store_id) => ({ external_id: orphan.external_id, store_id, active: false })));
      const result = await client.stock.set(items, callOptions);
      for (const item of result.results) if (item.status === 'error') fail(item.external_id, item.store_id, item.error?.code ?? 'UNKNOWN', item.error?.message ?? '');
    }
  } catch (error) {
    const code = error instanceof ApiError ? error.code : ((error as Error)?.name ?? 'ERROR');
    for (const orphan of withStores) fail(orphan.external_id, undefined, code, (error as Error)?.message ?? String(error));
  }
  const done = withStores.filter((orphan) => !failedIds.has(orphan.external_id));
  outcome.deactivated += done.length;
  outcome.errors += withStores.length - done.length;
  // Deactivated: if the item comes back, it is sent again (with its stores active as the ERP says).
  // A stock orphan is one pair: its product's other stores keep their state.
  if (done.length === 0) return;
  if (kind === 'catalog') await state.forget(scope, kind, done.map((orphan) => orphan.external_id));
  else await state.forgetKeys(scope, kind, done.map((orphan) => stockRules.repeatKey({ external_id: orphan.external_id, store_id: orphan.store_ids[0] })!));
}
