// Opens the inbox store named by `--store` or INTEGRATION_INBOX_STORE: a SQLite file, or a Postgres
// URL (which may carry a password, hence the environment variable). The CLI reads and retries
// entries through the store itself: it verifies no deliveries, so it needs no webhook secret.
import type { InboxStore } from '../inbox/index.ts';
import { UsageError } from './config.ts';

/** The store location from the option or the environment; `UsageError` when neither is set. */
export function storeLocation(option: string | undefined): string {
  const location = option ?? process.env.INTEGRATION_INBOX_STORE;
  if (!location) throw new UsageError('No inbox store: pass --store <sqlite file> or set INTEGRATION_INBOX_STORE (use the variable for a Postgres URL with a password).');
  return location;
}

export async function openStore(location: string): Promise<InboxStore> {
  if (/^postgres(ql)?:\/\//.test(location)) {
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
