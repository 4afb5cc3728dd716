// `catalog push --state` / `stock push --state`, `sync runs` and `sync forget`, run as real
// processes against the sandbox through the recording proxy.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, sentProductIds, startProxiedSandbox, type CliResult, type ProxiedSandbox } from './helpers.ts';

let service: ProxiedSandbox;
let dir: string;
let env: Record<string, string>;

async function cli(args: string[], options: Parameters<typeof runCli>[1] = {}): Promise<CliResult> {
  return runCli(args, { env, ...options });
}

function writeProducts(file: string, count: number, edit: (i: number) => Record<string, unknown> = () => ({})): void {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ external_id: `CLI-${i}`, name: `Item ${i}`, price: 1.5, ...edit(i) }));
  writeFileSync(file, `${lines.join('\n')}\n`);
}

const since = (start: number) => service.requests.slice(start);

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-sync-'));
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('catalog push --state', () => {
  test('sends only what changed, shows unchanged, and says "N of M changed" in a dry run', { timeout: 90_000 }, async () => {
    const file = join(dir, 'catalog.jsonl');
    const state = join(dir, 'state.db');
    writeProducts(file, 1200);
    const first = await cli(['catalog', 'push', file, '--state', state]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('catalog push: 1200 items, unchanged 0, sent 1200, created 1200, updated 0, errors 0');
    // The last progress line shows where the run ended, whatever its throttle held back.
    expect(first.stderr.trim().split('\n').at(-1)).toBe('catalog push: done 1200, unchanged 0, sent 1200, created 1200, updated 0, errors 0');

    let start = service.requests.length;
    const again = await cli(['catalog', 'push', file, '--state', state]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('unchanged 1200, sent 0');
    expect(since(start).map((r) => r.method)).toEqual(['GET']);

    writeProducts(file, 1200, (i) => (i === 7 || i === 900 ? { price: 2 } : {}));
    start = service.requests.length;
    const dry = await cli(['catalog', 'push', file, '--state', state, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Dry run: 2 of 1200 changed');
    expect(since(start).map((r) => r.method)).toEqual(['GET']);

    start = service.requests.length;
    const json = await cli(['catalog', 'push', file, '--state', state, '--json']);
    const done = JSON.parse(json.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(done).toMatchObject({ event: 'done', items: 1200, unchanged: 1198, sent: 2, updated: 2, errors: 0, orphans: 0 });
    expect(sentProductIds(since(start))).toEqual(['CLI-7', 'CLI-900']);
  });

  test('--full resends everything; the state may come from INTEGRATION_SYNC_STATE', { timeout: 90_000 }, async () => {
    const file = join(dir, 'full.jsonl');
    const state = join(dir, 'full.db');
    writeProducts(file, 3);
    await cli(['catalog', 'push', file], { env: { ...env, INTEGRATION_SYNC_STATE: state } });
    const start = service.requests.length;
    const full = await cli(['catalog', 'push', file, '--full'], { env: { ...env, INTEGRATION_SYNC_STATE: state } });
    expect(full.stdout).toContain('unchanged 0, sent 3');
    expect(sentProductIds(since(start))).toHaveLength(3);
  });

  test('writes rejected items with their line to the errors file, and --deactivate-missing turns off what left the file', { timeout: 90_000 }, async () => {
    const store = service.sandbox.storeIds[0]!;
    const file = join(dir, 'orphans.jsonl');
    const state = join(dir, 'orphans.db');
    writeProducts(file, 4, () => ({ stores: [{ store_id: store, stock_quantity: 1 }] }));
    expect((await cli(['catalog', 'push', file, '--state', state])).code).toBe(0);
    writeFileSync(file, `${readFileSync(file, 'utf8').split('\n').slice(0, 2).join('\n')}\n{"external_id":"CLI-0","name":"again","price":1}\n`);
    // Half of the catalog left the file: above the guard's 10%, so it takes the exact count (see below).
    const run = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--confirm-deactivate', '2']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('2 missing from this file (2 deactivated)');
    expect(service.sandbox.getProduct('CLI-3')?.stores[store]?.active).toBe(false);
    const errors = readFileSync(`${file}.errors.csv`, 'utf8');
    expect(errors).toMatch(/^3,CLI-0,,VALIDATION_ERROR,/m);
  });

  // Review 3, finding 9: the errors file says the same with --state as without.
  test('repeated ids are reported with the same words and lines as without --state', { timeout: 90_000 }, async () => {
    const header = 'external_id,name,price';
    const rows = Array.from({ length: 600 }, (_, i) => `REP-${i},Item ${i},1.5`);
    // Two repeats after the first window of items (their first lines are 8 and 501), and a bad price.
    const file = join(dir, 'repeats.csv');
    writeFileSync(file, `${[header, ...rows, 'REP-6,again,2', 'REP-499,again,3', 'REP-X,bad,-1'].join('\n')}\n`);
    const plain = await cli(['catalog', 'push', file, '--errors', join(dir, 'repeats-plain.errors.csv')]);
    const synced = await cli(['catalog', 'push', file, '--state', join(dir, 'repeats.db'), '--errors', join(dir, 'repeats-state.errors.csv')]);
    expect(plain.code).toBe(1);
    expect(synced.code).toBe(1);
    const withoutState = readFileSync(join(dir, 'repeats-plain.errors.csv'), 'utf8');
    expect(withoutState).toContain('602,REP-6,,VALIDATION_ERROR,external_id repeated in the file (first at line 8); only the first is sent');
    expect(withoutState).toContain('603,REP-499,,VALIDATION_ERROR,external_id repeated in the file (first at line 501); only the first is sent');
    expect(withoutState).toMatch(/^604,REP-X,,VALIDATION_ERROR,/m);
    expect(readFileSync(join(dir, 'repeats-state.errors.csv'), 'utf8')).toBe(withoutState);
    expect(synced.stdout).toContain('catalog push: 603 items, unchanged 0, sent 600, created 0, updated 600, errors 3; rejected items in');
  });

  test('an item acknowledged before and now failing the item checks is rejected, not missing from the file', { timeout: 90_000 }, async () => {
    const store = service.sandbox.storeIds[0]!;
    const file = join(dir, 'typo.jsonl');
    const state = join(dir, 'typo.db');
    const inStore = () => ({ stores: [{ store_id: store, stock_quantity: 1 }] });
    writeProducts(file, 3, (i) => ({ external_id: `TYPO-${i}`, ...inStore() }));
    expect((await cli(['catalog', 'push', file, '--state', state])).code).toBe(0);
    writeProducts(file, 3, (i) => ({ external_id: `TYPO-${i}`, ...inStore(), ...(i === 1 ? { price: -1 } : {}) }));
    const run = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--json']);
    expect(run.code).toBe(1);
    const done = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(done).toMatchObject({ event: 'done', items: 3, unchanged: 2, sent: 0, errors: 1, orphans: 0, deactivated: 0 });
    expect(readFileSync(`${file}.errors.csv`, 'utf8')).toMatch(/^2,TYPO-1,,VALIDATION_ERROR,price is -1/m);
    expect(service.sandbox.getProduct('TYPO-1')?.stores[store]?.active).toBe(true);
  });

  test('a push killed with SIGKILL and run again with --resume sends neither the acknowledged nor the unchanged', { timeout: 90_000 }, async () => {
    const file = join(dir, 'killed.jsonl');
    const state = join(dir, 'killed.db');
    writeProducts(file, 3000, (i) => ({ external_id: `K-${i}` }));
    const start = service.requests.length;
    service.delayMs = 150;
    const killed = await cli(['catalog', 'push', file, '--state', state], {
      onStart: (child) => {
        const timer = setInterval(() => {
          // The fourth request has arrived: the first two batches were answered and recorded.
          if (since(start).filter((r) => r.method === 'POST').length >= 4) {
            clearInterval(timer);
            child.kill('SIGKILL');
          }
        }, 5);
      },
    });
    service.delayMs = 0;
    expect(killed.signal).toBe('SIGKILL');
    const sentBefore = sentProductIds(since(start));
    // The killed run's process is gone and ran on this host: its lease is taken at once, no waiting.
    const middle = service.requests.length;
    const resumed = await cli(['catalog', 'push', file, '--state', state, '--resume']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).not.toMatch(/still holds the lease/);
    const sentAfter = sentProductIds(since(middle));
    const firstTwoBatches = sentBefore.slice(0, 1000);
    expect(sentAfter.filter((id) => firstTwoBatches.includes(id))).toEqual([]);
    expect(new Set([...sentBefore, ...sentAfter]).size).toBe(3000);
    expect(sentAfter.length).toBeLessThanOrEqual(2000);
    const done = JSON.parse((await cli(['catalog', 'push', file, '--state', state, '--json'])).stdout.trim().split('\n').at(-1)!) as { unchanged: number };
    expect(done.unchanged).toBe(3000);
  });
});

describe('catalog push --state reads the whole file first', () => {
  test('a JSON Lines record that does not parse at line 2,802: exit 2, nothing sent, and the message says so truly', { timeout: 90_000 }, async () => {
    const file = join(dir, 'late-bad-line.jsonl');
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ external_id: `LATE-${i}`, name: `Item ${i}`, price: 1 }));
    lines[2801] = '{"external_id": "LATE-2801", "name": "cut';
    writeFileSync(file, `${lines.join('\n')}\n`);
    const start = service.requests.length;
    const result = await cli(['catalog', 'push', file, '--state', join(dir, 'late-bad-line.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Line 2802: .*\(nothing was sent\)\.?\n$/);
    expect(since(start)).toEqual([]);
    expect(service.sandbox.getProduct('LATE-0')).toBeUndefined();
  });
});

describe('catalog push --state reads spreadsheets as a push without a state does', () => {
  // The same reader options reach the sync's pass over the file: the delimiter detected from the
  // header (or given with --delimiter), and a file writing decimal commas refused whole.
  test('a semicolon CSV pushes with no option; a --delimiter given is the one used; a decimal-comma file sends nothing', { timeout: 90_000 }, async () => {
    const state = join(dir, 'semicolon.db');
    const semicolon = join(dir, 'semicolon.csv');
    writeFileSync(semicolon, '\uFEFFexternal_id;name;price\r\nSEMI-1;"Café; 500g";24.9\r\nSEMI-2;Filtro;8.5\r\n');
    const first = await cli(['catalog', 'push', semicolon, '--state', state]);
    expect(first.stderr).not.toMatch(/unknown column/);
    expect(first.code).toBe(0);
    expect(service.sandbox.getProduct('SEMI-1')).toMatchObject({ name: 'Café; 500g', price: 24.9 });

    // A delimiter given is the one used: this header does not split at commas.
    let start = service.requests.length;
    const told = await cli(['catalog', 'push', semicolon, '--delimiter', ',', '--state', state]);
    expect(told.code).toBe(2);
    expect(told.stderr).toMatch(/--delimiter/);
    expect(since(start)).toEqual([]);

    const comma = join(dir, 'decimal-comma.csv');
    const rows = Array.from({ length: 12 }, (_, i) => `COMMA-${i};Item ${i};${i},90`);
    writeFileSync(comma, `external_id;name;price\n${rows.join('\n')}\n`);
    start = service.requests.length;
    const refused = await cli(['catalog', 'push', comma, '--state', state]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/decimal numbers with a comma.*\(nothing was sent\)/);
    expect(since(start)).toEqual([]);
  });
});

describe('--deactivate-missing behind the guard', () => {
  const header = 'external_id,name,price,gtin,category,store_id,stock_quantity,price_override,active';
  const csv = (count: number) => [header, ...Array.from({ length: count }, (_, i) => `GUARD-${i},Item ${i},2.50,,,${service.sandbox.storeIds[0]},1,,`)].join('\n');
  const active = (count: number) => Array.from({ length: count }, (_, i) => service.sandbox.getProduct(`GUARD-${i}`)).filter((product) => product?.stores[service.sandbox.storeIds[0]!]?.active !== false).length;

  test('a header-only CSV or a file cut to a third deactivates nothing and exits 2; --confirm-deactivate <n> deactivates exactly n', { timeout: 90_000 }, async () => {
    const file = join(dir, 'guard.csv');
    const state = join(dir, 'guard.db');
    writeFileSync(file, `${csv(30)}\n`);
    expect((await cli(['catalog', 'push', file, '--state', state])).code).toBe(0);

    writeFileSync(file, `${header}\n`);
    const empty = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing']);
    expect(empty.code).toBe(2);
    expect(empty.stdout).toContain('30 missing from this file (none deactivated)');
    expect(empty.stderr).toMatch(/30 of the 30 catalog items acknowledged before are missing.*read no items.*--confirm-deactivate 30/);
    expect(active(30)).toBe(30);

    writeFileSync(file, `${csv(10)}\n`);
    const cut = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing']);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/20 of the 30 catalog items acknowledged before are missing from this file \(66\.7%, above the 10% allowed\).*--confirm-deactivate 20/);
    expect(active(30)).toBe(30);

    const wrong = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--confirm-deactivate', '19']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--confirm-deactivate 19 does not match the 20 .*--confirm-deactivate 20/);
    expect(active(30)).toBe(30);

    const confirmed = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--confirm-deactivate', '20']);
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout).toContain('20 missing from this file (20 deactivated)');
    expect(active(30)).toBe(10);
    expect(active(10)).toBe(10);
  });

  // Review 3, finding 6: a deactivation that did not happen is not a success.
  test('a confirmed deactivation that fails or is skipped exits 1 and says so; a skipped one is explained', { timeout: 90_000 }, async () => {
    const store = service.sandbox.storeIds[1]!;
    const file = join(dir, 'deactivate-fails.jsonl');
    const state = join(dir, 'deactivate-fails.db');
    const product = (i: number) => JSON.stringify({ external_id: `DF-${i}`, name: `Item ${i}`, price: 2, ...(i === 19 ? {} : { stores: [{ store_id: store, stock_quantity: 1, active: true }] }) });
    const write = (count: number) => writeFileSync(file, `${Array.from({ length: count }, (_, i) => product(i)).join('\n')}\n`);
    write(20); // DF-19 is sent without stores: nothing to switch off if it leaves
    expect((await cli(['catalog', 'push', file, '--state', state])).code).toBe(0);

    write(17);
    service.sandbox.setStoreWriteFailure(store, true);
    let failing: CliResult;
    try {
      failing = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--confirm-deactivate', '3']);
    } finally {
      service.sandbox.setStoreWriteFailure(store, false);
    }
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('errors 0, 3 missing from this file (0 deactivated, 2 failed, 1 skipped: sent without stores)');
    expect(failing.stderr).toContain('2 of the 3 missing catalog items were not deactivated (STORE_WRITE_FAILED); they are listed in');
    expect(failing.stderr).toContain('1 missing catalog item (DF-19) was last sent without stores: there is no store to switch off, so nothing was sent for it.');
    expect(failing.stderr).toContain(`integration-sdk sync forget catalog --external-id DF-19 --state ${state}`);
    const errors = readFileSync(`${file}.errors.csv`, 'utf8');
    expect(errors).toMatch(/^0,DF-17,,STORE_WRITE_FAILED,deactivate: /m);
    expect(errors).toMatch(/^0,DF-18,,STORE_WRITE_FAILED,deactivate: /m);
    expect(errors).toMatch(/^0,DF-19,,NO_STORES,deactivate: /m);
    expect(service.sandbox.getProduct('DF-17')?.stores[store]?.active).toBe(true);

    // The store writes again: the two are deactivated; the one without stores is still skipped.
    const retried = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing', '--confirm-deactivate', '3']);
    expect(retried.code).toBe(1);
    expect(retried.stdout).toContain('3 missing from this file (2 deactivated, 1 skipped: sent without stores)');
    expect(service.sandbox.getProduct('DF-17')?.stores[store]?.active).toBe(false);
    // Forgotten as the message says, it is missing no more.
    expect((await cli(['sync', 'forget', 'catalog', '--external-id', 'DF-19', '--state', state])).code).toBe(0);
    const clean = await cli(['catalog', 'push', file, '--state', state, '--deactivate-missing']);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toContain('items, unchanged 17, sent 0, created 0, updated 0, errors 0');
    expect(clean.stdout).not.toContain('missing');
  });

  test('--confirm-deactivate goes with --deactivate-missing only', async () => {
    const file = join(dir, 'guard-alone.csv');
    writeFileSync(file, `${csv(1)}\n`);
    const start = service.requests.length;
    const alone = await cli(['catalog', 'push', file, '--state', join(dir, 'guard-alone.db'), '--confirm-deactivate', '3']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^--confirm-deactivate goes with --deactivate-missing/);
    expect(since(start)).toEqual([]);
  });
});

describe('sync runs', () => {
  test("lists the runs of the key's scope; --all-scopes lists every scope's, without a key", { timeout: 90_000 }, async () => {
    const file = join(dir, 'scopes.jsonl');
    const state = join(dir, 'scopes.db');
    writeProducts(file, 1, () => ({ external_id: 'SCOPE-1' }));
    await cli(['catalog', 'push', file, '--state', state]);
    await cli(['catalog', 'push', file, '--state', state], { env: { ...env, INTEGRATION_API_KEY: service.sandbox.keys.oneStore } });
    const runIds = (stdout: string) => stdout.trim().split('\n').map((line) => (JSON.parse(line) as { runId: string }).runId);
    const mine = await cli(['sync', 'runs', '--state', state, '--json']);
    const theirs = await cli(['sync', 'runs', '--state', state, '--json'], { env: { ...env, INTEGRATION_API_KEY: service.sandbox.keys.oneStore } });
    const every = await cli(['sync', 'runs', '--state', state, '--json', '--all-scopes'], { env: { INTEGRATION_BASE_URL: service.baseUrl } });
    expect(runIds(mine.stdout)).toHaveLength(1);
    expect(runIds(theirs.stdout)).toHaveLength(1);
    expect(runIds(every.stdout)).toEqual([...runIds(theirs.stdout), ...runIds(mine.stdout)]);
    const noKey = await cli(['sync', 'runs', '--state', state], { env: { INTEGRATION_BASE_URL: service.baseUrl } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/No API key.*--all-scopes/);
  });
});

describe('catalog push with a state that cannot be opened', () => {
  test('names the sync state and --state, not the inbox', async () => {
    const file = join(dir, 'unopenable.jsonl');
    writeProducts(file, 1);
    const result = await cli(['catalog', 'push', file, '--state', join(dir, 'no-such-dir', 'state.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/The sync state database cannot be opened: check the path given to --state or INTEGRATION_SYNC_STATE/);
    expect(result.stderr).not.toMatch(/inbox/);
  });
});

describe('catalog push without a state', () => {
  test('--full, --max-age and --deactivate-missing are refused (exit 2, nothing sent) rather than ignored', async () => {
    const file = join(dir, 'no-state.jsonl');
    writeProducts(file, 3);
    const start = service.requests.length;
    for (const flags of [['--deactivate-missing'], ['--full'], ['--max-age', '3']]) {
      const result = await cli(['catalog', 'push', file, ...flags], { env: { ...env, INTEGRATION_SYNC_STATE: '' } });
      expect(result.code, flags[0]).toBe(2);
      expect(result.stderr, flags[0]).toMatch(new RegExp(`^${flags[0]} works only with --state`));
    }
    expect(since(start)).toEqual([]);
  });
});

describe('sync runs / sync forget', () => {
  test('lists the runs and forgets one item, which the next push sends again', { timeout: 90_000 }, async () => {
    const file = join(dir, 'forget.jsonl');
    const state = join(dir, 'forget.db');
    writeProducts(file, 2, (i) => ({ external_id: `F-${i}` }));
    await cli(['catalog', 'push', file, '--state', state]);
    const runs = await cli(['sync', 'runs', '--state', state]);
    expect(runs.code).toBe(0);
    // Piped: the table's every column (total, unchanged, sent, created, updated, errors, orphans, run_id).
    expect(runs.stdout).toMatch(/catalog\s+completed\s+2\s+0\s+2\s+2\s+0\s+0\s+0\s+[0-9a-f-]{36}\n/);
    const forgot = await cli(['sync', 'forget', 'catalog', '--external-id', 'F-1', '--state', state]);
    expect(forgot.stdout).toContain('Forgot 1 catalog item');
    const start = service.requests.length;
    await cli(['catalog', 'push', file, '--state', state]);
    expect(sentProductIds(since(start))).toEqual(['F-1']);
    const none = await cli(['sync', 'runs', '--all-scopes']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('INTEGRATION_SYNC_STATE');
    // A mistyped path is refused, and no empty state file is left behind for it.
    const typo = await cli(['sync', 'runs', '--all-scopes', '--state', join(dir, 'forgett.db')]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^No sync state at .*forgett\.db/);
    expect(existsSync(join(dir, 'forgett.db'))).toBe(false);
  });
});

describe('stock push --state', () => {
  test('sends changed pairs only', { timeout: 90_000 }, async () => {
    const [s1, s2] = service.sandbox.storeIds;
    const known = service.sandbox.seed.products[1]!;
    const file = join(dir, 'stock.jsonl');
    const state = join(dir, 'stock.db');
    const write = (quantity: number) =>
      writeFileSync(file, `${JSON.stringify({ external_id: known, store_id: s1, stock_quantity: 3 })}\n${JSON.stringify({ external_id: known, store_id: s2, stock_quantity: quantity })}\n`);
    write(4);
    expect((await cli(['stock', 'push', file, '--state', state])).stdout).toContain('stock push: 2 items, unchanged 0, sent 2, updated 2, errors 0');
    write(5);
    const start = service.requests.length;
    expect((await cli(['stock', 'push', file, '--state', state])).stdout).toContain('unchanged 1, sent 1, updated 1');
    expect(since(start).filter((r) => r.method === 'PATCH').map((r) => JSON.parse(r.body) as unknown)).toEqual([{ items: [{ external_id: known, store_id: s2, stock_quantity: 5 }] }]);
  });
});

test('the sync commands and the push options have help with an example', { timeout: 90_000 }, async () => {
  for (const command of [['sync'], ['sync', 'runs'], ['sync', 'forget']]) {
    const help = await cli([...command, '--help']);
    expect(help.code, command.join(' ')).toBe(0);
    expect(help.stdout, command.join(' ')).toMatch(/Example:\n\s+integration-sdk sync /);
  }
  const push = await cli(['catalog', 'push', '--help']);
  for (const option of ['--state <location>', '--full', '--max-age <days>', '--deactivate-missing', '--confirm-deactivate <n>']) expect(push.stdout).toContain(option);
  expect((await cli(['sync', 'runs', '--help'])).stdout).toContain('--all-scopes');
  expect((await cli(['catalog', 'push', 'x.jsonl', '--state', 'x.db', '--max-age', '-1'])).code).toBe(2);
});
