// Opens the inbox store named by `--store` or INTEGRATION_INBOX_STORE: a SQLite file, or a Postgres
// URL (which may carry a password, hence the environment variable). The CLI reads and retries
// entries through the store itself: it verifies no deliveries, so it needs no webhook secret.
import { InvalidArgumentError } from 'commander';
import type { InboxStore } from '../inbox/index.ts';
import { nodeSqliteAvailable, sqliteNodeRequirement } from '../storage/sqlite.ts';
import { tenantIdProblem } from '../tenants/tenant-id.ts';
import { UsageError } from './config.ts';

/** A store this Node cannot open (a SQLite file before Node 22.13): the command cannot run, whatever its arguments. */
export class UnsupportedNode extends UsageError {
  override name = 'UnsupportedNode';
}

const isPostgres = (location: string) => /^postgres(ql)?:\/\//.test(location);

/** Throws {@link UnsupportedNode} (one sentence: which parts need which Node) for a SQLite location on a Node without node:sqlite. */
export function assertStoreRuns(location: string): void {
  if (!isPostgres(location) && !nodeSqliteAvailable()) throw new UnsupportedNode(sqliteNodeRequirement());
}

/** The store location from the option or the environment; `UsageError` when neither is set. */
export function storeLocation(option: string | undefined): string {
  const location = option ?? process.env.INTEGRATION_INBOX_STORE;
  if (!location) throw new UsageError('No inbox store: pass --store <sqlite file> or set INTEGRATION_INBOX_STORE (use the variable for a Postgres URL with a password).');
  return location;
}

export async function openStore(location: string): Promise<InboxStore> {
  // Before the path is looked at: on such a Node no path is right, and the flag is not to blame.
  assertStoreRuns(location);
  if (isPostgres(location)) {
    const entry = (await import('../inbox/postgres/index.ts')) as unknown as { postgresStore?: (options: { connectionString: string }) => InboxStore };
    if (typeof entry.postgresStore !== 'function') throw new UsageError('This build has no Postgres inbox store yet: use a SQLite file.');
    const store = entry.postgresStore({ connectionString: location });
    await store.migrate();
    return store;
  }
  const { existsSync } = await import('node:fs');
  if (!existsSync(location)) throw new UsageError(`No inbox database at ${location}: check the path given to --store.`);
  const { sqliteStore } = await import('../inbox/sqlite/index.ts');
  const store = sqliteStore({ path: location });
  await store.migrate();
  return store;
}

/** `--tenant <id>`: a tenant id as the registry takes them, else the rule it breaks. */
export function tenantOption(value: string): string {
  const problem = tenantIdProblem(value);
  if (problem !== null) throw new InvalidArgumentError(`--tenant ${problem}.`);
  return value;
}
