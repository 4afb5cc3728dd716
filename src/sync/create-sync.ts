import { IntegrationClient } from '../client.ts';
import { systemClock } from '../clock.ts';
import { ConfigurationError } from '../errors/index.ts';
import { checkShare, deactivateOrphans, DEFAULT_MAX_DEACTIVATE_SHARE } from './deactivate.ts';
import { catalogKind, stockKind } from './kinds.ts';
import { Pacer } from './pacer.ts';
import { runSync, type RunContext } from './run.ts';
import { baseUrlOf, scopeOf } from './scope.ts';
import { recordOf } from './run-record.ts';
import type { OrphanRow, SyncKind } from './state.ts';
import type { CatalogSyncResult, CreateSyncOptions, StockSyncResult, Sync, SyncOrphan, SyncRunError } from './types.ts';

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
  const maxDeactivateShare = checkShare(options.maxDeactivateShare, 'maxDeactivateShare') ?? DEFAULT_MAX_DEACTIVATE_SHARE;

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
    // Pages read from SQLite come without waiting on I/O: a turn now and then, as a run gives.
    const pacer = new Pacer();
    for (;;) {
      const page = await state.orphans(at, kind, last.seq, after, PAGE);
      yield* page;
      if (page.length < PAGE) return;
      after = page.at(-1)!.key;
      await pacer.pace();
    }
  }

  return {
    // async: a bad argument rejects the promise, as upsertProducts does, instead of throwing at the call.
    catalog: async (items, runOptions) => (await runSync(context, catalogKind, items, runOptions)) as CatalogSyncResult,

    stock: async (items, runOptions) => {
      const { created: _created, ...result } = await runSync(context, stockKind, items, runOptions);
      return result as StockSyncResult;
    },

    // An iterable, not a generator: each iteration reads the state anew, so deactivate() can count
    // the orphans before it sends anything and then go through them.
    orphans(kind) {
      return {
        async *[Symbol.asyncIterator]() {
          checkKind(kind);
          for await (const row of orphanRows(kind)) {
            yield { external_id: row.externalId, store_ids: row.storeIds, lastSentAt: new Date(row.sentAt) } satisfies SyncOrphan;
          }
        },
      };
    },

    async deactivate(kind, orphans, deactivateOptions) {
      checkKind(kind);
      return deactivateOrphans({ client, state, scope: await currentScope(), kind, maxDeactivateShare }, orphans, deactivateOptions);
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
      const scope = runsOptions?.allScopes === true ? undefined : await currentScope();
      let before: number | undefined;
      let left = limit;
      while (left > 0) {
        const page = await state.runs(Math.min(left, PAGE), before, scope);
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
