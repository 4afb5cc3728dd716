// The delta sync on a real Postgres: the same rules as on SQLite, state shared by two syncs (as two
// processes would), and one database holding the inbox and the sync state side by side.
import { describe, expect, it } from 'vitest';
import { createSync, SyncRunInProgressError, SyncStateError } from 'integration-sdk/sync';
import { postgresSyncState } from 'integration-sdk/sync/postgres';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { clientFor, onCleanup, startSandbox } from '../../e2e/helpers.ts';
import { usePostgres } from '../../inbox/support/postgres.ts';

const postgres = usePostgres();
let schemas = 0;

function products(count: number) {
  return Array.from({ length: count }, (_, i) => ({ external_id: `PG-${i}`, name: `Product ${i}`, price: 2 }));
}

describe('sync on postgresSyncState', () => {
  it('sends 0 requests on an identical run, one batch for three edits, and shares the lease between two syncs', async () => {
    const sandbox = await startSandbox();
    const schema = `sync_e2e_${++schemas}`;
    const a = clientFor(sandbox);
    const b = clientFor(sandbox);
    const syncA = createSync({ client: a.client, state: postgresSyncState({ connectionString: postgres.current.url, schema }) });
    const syncB = createSync({ client: b.client, state: postgresSyncState({ connectionString: postgres.current.url, schema }) });
    onCleanup(() => syncA.close());
    onCleanup(() => syncB.close());

    expect(await syncA.catalog(products(1100))).toMatchObject({ sent: 1100, created: 1100, orphans: 0 });
    a.exchanges.length = 0;
    expect(await syncB.catalog(products(1100))).toMatchObject({ unchanged: 1100, sent: 0 });
    expect(b.exchanges.map((e) => e.method)).toEqual(['GET']);

    const edited = products(1100);
    for (const i of [1, 600, 1099]) edited[i]!.price = 3;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* held() {
      yield* edited.slice(0, 10);
      await gate;
      yield* edited.slice(10);
    }
    const running = syncA.catalog(held());
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(syncB.catalog(edited)).rejects.toBeInstanceOf(SyncRunInProgressError);
    release();
    expect(await running).toMatchObject({ unchanged: 1097, sent: 3, updated: 3 });
    expect(a.exchanges.filter((e) => e.method === 'POST')).toHaveLength(1);
  });

  it('lives beside the inbox in one database, in its own schema', async () => {
    const sandbox = await startSandbox();
    const inbox = postgresStore({ connectionString: postgres.current.url });
    await inbox.migrate();
    onCleanup(() => inbox.close());
    const { client } = clientFor(sandbox);
    const sync = createSync({ client, state: postgresSyncState({ connectionString: postgres.current.url }) });
    onCleanup(() => sync.close());
    expect((await sync.catalog(products(2))).created).toBe(2);
    expect(await inbox.stats(Date.now())).toMatchObject({ pending: 0 });
  });

  it('a Postgres that is down rejects with a sentence naming the state and what to do, never its password', { timeout: 60_000 }, async () => {
    const sandbox = await startSandbox();
    const { client } = clientFor(sandbox);
    const url = new URL(postgres.current.url);
    const sync = createSync({ client, state: postgresSyncState({ connectionString: postgres.current.url, schema: 'sync_down' }) });
    onCleanup(() => sync.close());
    await postgres.current.stop();
    try {
      const error = await sync.catalog(products(1)).then(() => undefined, (rejected: unknown) => rejected);
      expect(error).toBeInstanceOf(SyncStateError);
      expect((error as Error).message).toBe(
        `Cannot reach the sync state (Postgres at ${url.host}/postgres, schema sync_down): connection refused: nothing listens at that address and port. Check that Postgres is running there and the connection string, then run again.`,
      );
      expect(JSON.stringify(error)).not.toContain(url.password);
    } finally {
      await postgres.current.start();
    }
  });
});
