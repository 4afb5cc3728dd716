import { IntegrationClient } from '../client.ts';
import { systemClock } from '../clock.ts';
import { ApiError, ConfigurationError } from '../errors/index.ts';
import { stockRules } from '../resources/bulk/item-checks.ts';
import type { CallOptions } from '../transport/types.ts';
import { catalogKind, stockKind } from './kinds.ts';
import { runSync, type RunContext } from './run.ts';
import { baseUrlOf, scopeOf } from './scope.ts';
import type { OrphanRow, StoredSyncRun, SyncKind } from './state.ts';
import type { CatalogSyncResult, CreateSyncOptions, DeactivateResult, StockSyncResult, Sync, SyncOrphan, SyncRunError, SyncRunRecord } from './types.ts';

const DAY_MS = 86_400_000;
const PAGE = 1000;

function checkKind(kind: unknown): asserts kind is SyncKind {
  if (kind !== 'catalog' && kind !== 'stock') throw new ConfigurationError(`kind must be 'catalog' or 'stock', got ${typeof kind === 'string' ? `'${kind}'` : typeof kind}.`);
}

function maxAgeMsOf(maxAgeDays: unknown): number {
  if (maxAgeDays === undefined || maxAgeDays === Infinity) return Infinity;
  if (typeof maxAgeDays !== 'number' || !(maxAgeDays >= 0)) throw new ConfigurationError('maxAgeDays must be a number of days >= 0 (0 resends everything; leave it out or Infinity to never resend for age).');
  return maxAgeDays * DAY_MS;
}

function recordOf(run: StoredSyncRun): SyncRunRecord {
  return {
    runId: run.runId,
    kind: run.kind,
    baseUrl: run.baseUrl,
    merchantId: run.merchantId,
    startedAt: new Date(run.startedAt),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt),
    outcome: run.outcome,
    complete: run.complete,
    full: run.full,
    total: run.total,
    unchanged: run.unchanged,
    sent: run.sent,
    ...(run.created === undefined ? {} : { created: run.created }),
    updated: run.updated,
    errors: run.errors,
    orphans: run.orphans,
    durationMs: run.finishedAt === null ? null : run.finishedAt - run.startedAt,
    error: run.error,
  };
}

/**
 * A delta sync over a client: `catalog` and `stock` send only the items whose fingerprint differs
 * from what the service last acknowledged (or that were never sent, or not for `maxAgeDays`).
 * State moves only for items the service acknowledged; one run per scope and kind at a time.
 *
 * @example
 * ```ts
 * import { IntegrationClient } from 'integration-sdk';
 * import { createSync } from 'integration-sdk/sync';
 * import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
 *
 * const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY!, baseUrl: 'https://platform.example.com' });
 * const sync = createSync({ client, state: sqliteSyncState({ path: './integration-state.db' }), maxAgeDays: 7 });
 * const run = await sync.catalog([{ external_id: 'SKU-1', name: 'Coffee 500g', price: 32.9 }]);
 * console.log(`${run.sent} sent, ${run.unchanged} unchanged, ${run.errors} errors`);
 * await sync.close();
 * ```
 */
export function createSync(options: CreateSyncOptions): Sync {
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('createSync needs { client, state }.');
  const { client, state } = options;
  if (!(client instanceof IntegrationClient) && typeof (client as { health?: unknown })?.health !== 'function') {
    throw new ConfigurationError('createSync needs { client }: an IntegrationClient.');
  }
  if (typeof state?.lookup !== 'function') throw new ConfigurationError('createSync needs { state }: sqliteSyncState({ path }) or postgresSyncState({ connectionString }).');
  const context: RunContext = { client, state, clock: options.clock ?? systemClock, maxAgeMs: maxAgeMsOf(options.maxAgeDays) };

  /** The scope of this client's key: one health() call, remembered for orphans/forget/deactivate. */
  let scope: Promise<string> | undefined;
  const currentScope = () => {
    scope ??= client.health().then(
      (health) => scopeOf(baseUrlOf(client), health),
      (error: unknown) => {
        scope = undefined;
        throw error;
      },
    );
    return scope;
  };

  async function* orphanRows(kind: SyncKind): AsyncGenerator<OrphanRow> {
    const at = await currentScope();
    const last = await state.lastCompleteRun(at, kind);
    if (!last) return;
    let after: string | null = null;
    for (;;) {
      const page = await state.orphans(at, kind, last.seq, after, PAGE);
      yield* page;
      if (page.length < PAGE) return;
      after = page.at(-1)!.key;
    }
  }

  return {
    // async: a bad argument rejects the promise, as upsertProducts does, instead of throwing at the call.
    catalog: async (items, runOptions) => (await runSync(context, catalogKind, items, runOptions)) as CatalogSyncResult,

    stock: async (items, runOptions) => {
      const { created: _created, ...result } = await runSync(context, stockKind, items, runOptions);
      return result as StockSyncResult;
    },

    async *orphans(kind) {
      checkKind(kind);
      for await (const row of orphanRows(kind)) {
        yield { external_id: row.externalId, store_ids: row.storeIds, lastSentAt: new Date(row.sentAt) } satisfies SyncOrphan;
      }
    },

    async deactivate(kind, orphans, callOptions?: CallOptions) {
      checkKind(kind);
      const at = await currentScope();
      const outcome: DeactivateResult = { deactivated: 0, skipped: 0, errors: 0, results: [] };
      let batch: SyncOrphan[] = [];
      const flush = async () => {
        const orphansOfBatch = batch;
        batch = [];
        const withStores = orphansOfBatch.filter((orphan) => orphan.store_ids.length > 0);
        outcome.skipped += orphansOfBatch.length - withStores.length;
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
        if (done.length > 0) {
          if (kind === 'catalog') await state.forget(at, kind, done.map((orphan) => orphan.external_id));
          else await state.forgetKeys(at, kind, done.map((orphan) => stockRules.repeatKey({ external_id: orphan.external_id, store_id: orphan.store_ids[0] })!));
        }
      };
      for await (const orphan of orphans as AsyncIterable<SyncOrphan>) {
        batch.push(orphan);
        if (batch.length >= 500) await flush();
      }
      await flush();
      return outcome;
    },

    async forget(kind, forgetOptions) {
      checkKind(kind);
      const externalIds = forgetOptions?.externalIds;
      if (externalIds !== undefined && (!Array.isArray(externalIds) || externalIds.some((id) => typeof id !== 'string'))) {
        throw new ConfigurationError('forget: externalIds must be an array of strings.');
      }
      return state.forget(await currentScope(), kind, externalIds);
    },

    async *runs(runsOptions) {
      const limit = runsOptions?.limit ?? 20;
      if (!Number.isInteger(limit) || limit < 1) throw new ConfigurationError('runs: limit must be an integer >= 1.');
      let before: number | undefined;
      let left = limit;
      while (left > 0) {
        const page = await state.runs(Math.min(left, PAGE), before);
        for (const run of page) yield recordOf(run);
        left -= page.length;
        if (page.length < Math.min(left + page.length, PAGE)) return;
        before = page.at(-1)!.seq;
      }
    },

    async *runErrors(runId) {
      if (typeof runId !== 'string' || runId === '') throw new ConfigurationError('runErrors needs a runId.');
      let after = -1;
      for (;;) {
        const page = await state.runErrors(runId, after, PAGE);
        yield* page satisfies SyncRunError[];
        if (page.length < PAGE) return;
        after = page.at(-1)!.index;
      }
    },

    close: () => state.close(),
  };
}
