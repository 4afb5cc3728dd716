// The sync commands on a Postgres state, run as real processes: when that Postgres is down, every
// command says it cannot open the sync state and names --state / INTEGRATION_SYNC_STATE, never the
// inbox's store or its flag, and never the URL's password (issue 26 item 18).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { usePostgres } from '../inbox/support/postgres.ts';
import { runCli, startProxiedSandbox, type ProxiedSandbox } from './helpers.ts';

const postgres = usePostgres();
let service: ProxiedSandbox;
let dir: string;

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-sync-pg-'));
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a Postgres sync state', () => {
  test('works, and once its server is stopped every sync command names the sync state', { timeout: 120_000 }, async () => {
    const env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl, INTEGRATION_SYNC_STATE: postgres.current.url };
    const file = join(dir, 'catalog.jsonl');
    writeFileSync(file, `${JSON.stringify({ external_id: 'PG-CLI-1', name: 'One', price: 1 })}\n`);
    expect((await runCli(['catalog', 'push', file], { env })).code).toBe(0);
    const listed = await runCli(['sync', 'runs'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/catalog\s+completed/);

    await postgres.current.stop();
    try {
      const commands = [
        ['sync', 'runs'],
        ['sync', 'runs', '--all-scopes'],
        ['sync', 'forget', 'catalog'],
        ['catalog', 'push', file],
      ];
      for (const args of commands) {
        const result = await runCli(args, { env });
        const what = args.join(' ');
        expect(result.code, what).toBe(2);
        expect(result.stderr, what).toContain(
          'Cannot open the sync state (connection refused: nothing is listening at that address and port): check the location given by --state or INTEGRATION_SYNC_STATE, and that Postgres is running there.',
        );
        expect(result.stderr, what).not.toMatch(/inbox|--store/i);
        expect(result.stderr, what).not.toContain(':pw@');
      }
      // The URL given to --state itself, password included, is not echoed either.
      const flagged = await runCli(['sync', 'runs', '--all-scopes', '--state', postgres.current.url], { env: { INTEGRATION_BASE_URL: service.baseUrl } });
      expect(flagged.code).toBe(2);
      expect(flagged.stderr).toMatch(/^Cannot open the sync state/);
      expect(flagged.stderr).not.toContain(':pw@');
    } finally {
      await postgres.current.start();
    }
  });
});
