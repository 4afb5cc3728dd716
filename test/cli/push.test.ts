// catalog push / stock push run as real processes against the sandbox, through a recording proxy.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { runCli, sentProductIds, startProxiedSandbox, type CliResult, type ProxiedSandbox } from './helpers.ts';

let service: ProxiedSandbox;
let dir: string;
let env: Record<string, string>;
const outputs: CliResult[] = [];
const STORE = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

async function cli(args: string[], options: Parameters<typeof runCli>[1] = {}): Promise<CliResult> {
  const result = await runCli(args, { env, ...options });
  outputs.push(result);
  return result;
}

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-push-'));
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('catalog push', () => {
  test('pushes a CSV: counts, one product per run of rows, decimals exactly as written', async () => {
    const file = join(dir, 'happy.csv');
    writeFileSync(file, [
      '\uFEFFexternal_id,name,price,category,store_id,stock_quantity,price_override,active',
      `H-1,"Arroz, 1kg",19.90,Mercearia,${STORE},2.125,,true`,
      `H-1,,,,b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d,10,8.99,`,
      'H-2,Feijão,12.345,,,,,',
      '',
    ].join('\r\n'));
    const result = await cli(['catalog', 'push', file]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/2\/2 items, created 2, updated 0, errors 0/);
    const sent = service.requests.filter((r) => r.path.endsWith('/products/bulk')).at(-1)!.body;
    expect(sent).toContain('"price":19.9');
    expect(sent).toContain('"price":12.345');
    expect(sent).toContain('"stock_quantity":2.125');
    expect(service.sandbox.getProduct('H-1')).toMatchObject({ name: 'Arroz, 1kg', price: 19.9 });
    expect(Object.keys(service.sandbox.getProduct('H-1')!.stores)).toHaveLength(2);
    expect(existsSync(`${file}.errors.csv`)).toBe(false);
    expect(existsSync(`${file}.checkpoint.json`)).toBe(false);
  });

  test('rejected rows go to --errors with the line each starts on; exit 1', async () => {
    const file = join(dir, 'bad.csv');
    writeFileSync(file, [
      'external_id,name,price,store_id,stock_quantity',
      'E-1,Alpha,10.00,,',
      '',
      `E-2,"Beta`,
      `two lines",5.5,${STORE},1.2345`,
      'E-1,Alpha again,3,,',
      'E-3,Gamma,4,,',
      `E-3,Other,,${STORE},3`,
      'E-4,,,,',
    ].join('\n'));
    const errors = join(dir, 'bad-errors.csv');
    const result = await cli(['catalog', 'push', file, '--errors', errors]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/created 1, updated 0, errors 4/);
    const lines = readFileSync(errors, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('line,external_id,store_id,code,message');
    const byLine = Object.fromEntries(lines.slice(1).map((l) => [l.split(',')[0], l]));
    expect(Object.keys(byLine).sort()).toEqual(['4', '6', '7', '9']);
    expect(byLine['4']).toMatch(/^4,E-2,,VALIDATION_ERROR,.*stock_quantity/);
    expect(byLine['6']).toMatch(/^6,E-1,,VALIDATION_ERROR,.*first at line 2/);
    expect(byLine['7']).toMatch(/^7,E-3,.*name differs/);
    expect(byLine['9']).toMatch(/^9,E-4,/);
    expect(service.sandbox.getProduct('E-3')).toBeUndefined();
  });

  test('--dry-run validates, writes the errors file and sends nothing', async () => {
    const file = join(dir, 'dry.jsonl');
    writeFileSync(file, ['{"external_id":"D-1","name":"d","price":1.5}', '', '{"external_id":"D-1","name":"d","price":2}', '{"external_id":"D-2","name":"e","price":3}'].join('\n'));
    const before = service.requests.length;
    const result = await cli(['catalog', 'push', file, '--dry-run']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/3 items read, 2 would be sent, 1 rejected/);
    expect(readFileSync(`${file}.errors.csv`, 'utf8')).toMatch(/^line,external_id,store_id,code,message\n3,D-1,,VALIDATION_ERROR,.*first at line 1/);
    expect(service.requests.length).toBe(before);
    const clean = await cli(['catalog', 'push', file.replace('dry', 'dry2'), '--dry-run']);
    expect(clean.code).toBe(2); // missing file
    expect(service.requests.length).toBe(before);
  });

  test('a malformed file, a bad number or an unknown column: one sentence, exit 2, nothing sent', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['n.csv', 'external_id,name,price\nX-1,ok,1\nX-2,y,12;50\n', /Line 3: price must be a plain decimal/],
      ['c.csv', 'external_id,nome,price\nX,y,1\n', /Line 1: unknown column "nome"/],
      ['j.jsonl', '{"external_id":"X-1","name":"a","price":1}\n{"external_id":"X-2",\n', /Line 2: not valid JSON/],
      ['p.jsonl', '{"external_id":"X-1","name":"a","price":0.1000000000000000055511}\n', /more digits than can be sent exactly/],
      ['a.json', '[{"external_id":"X-1"}, oops]', /not a JSON array of items/],
    ];
    const before = service.requests.length;
    for (const [name, content, message] of cases) {
      const file = join(dir, name);
      writeFileSync(file, content);
      const result = await cli(['catalog', 'push', file]);
      expect(result.code, name).toBe(2);
      expect(result.stderr, name).toMatch(message);
      expect(result.stderr.trim().split('\n'), name).toHaveLength(1);
    }
    expect(service.requests.length).toBe(before);
  });

  test('a missing key, a key given as an argument, a rejected key: exit 2, the key never printed', async () => {
    const file = join(dir, 'k.csv');
    writeFileSync(file, 'external_id,name,price\nK-1,k,1\n');
    const missing = await cli(['catalog', 'push', file], { env: { INTEGRATION_BASE_URL: service.baseUrl } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/INTEGRATION_API_KEY/);
    const argument = await cli(['catalog', 'push', file, `--api-key=${service.sandbox.keys.full}`]);
    expect(argument.code).toBe(2);
    expect(argument.stderr).toMatch(/never taken as an argument/);
    service.sandbox.revokeKey(service.sandbox.keys.readOnly);
    const revoked = await cli(['catalog', 'push', file], { env: { ...env, INTEGRATION_API_KEY: service.sandbox.keys.readOnly } });
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toMatch(/rejected the key/);
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${service.sandbox.keys.full}\n`);
    const fromFile = await cli(['catalog', 'push', file, '--api-key-file', keyFile], { env: { INTEGRATION_BASE_URL: service.baseUrl } });
    expect(fromFile.code).toBe(0);
  });
});

describe('JSON array and local checks', () => {
  test('a JSON array: errors name the physical line an element starts on; numbers are sent as written', async () => {
    const file = join(dir, 'array.json');
    writeFileSync(file, [
      '\uFEFF[',
      '  {"external_id":"A-1","name":"a","price":12.3450},',
      '  {"external_id":"A-2",',
      `   "name":"b","price":1, "stores":[{"store_id":"${STORE}","stock_quantity":1.2345}]},`,
      '',
      '  {"external_id":"A-1","name":"again","price":2}',
      ']',
    ].join('\n'));
    const before = service.requests.length;
    const result = await cli(['catalog', 'push', file]);
    expect(result.code).toBe(1);
    const rows = readFileSync(`${file}.errors.csv`, 'utf8').trim().split('\n');
    expect(rows[1]).toMatch(/^3,A-2,,VALIDATION_ERROR,stores\[0\]\.stock_quantity has 4 decimal places/);
    expect(rows[2]).toMatch(/^6,A-1,,VALIDATION_ERROR,.*first at line 2/);
    expect(service.requests.slice(before).map((r) => r.body)).toEqual(['{"items":[{"external_id":"A-1","name":"a","price":12.345}]}']);
  });

  test('JSON Lines and a JSON array larger than one read: characters split between reads arrive whole', async () => {
    // Names of 1-, 2-, 3- and 4-byte UTF-8 characters: over ~300 KB, some fall across every read boundary.
    const names = Array.from({ length: 1200 }, (_, i) => `${'aã€😀'.repeat(20 + (i % 7))} ${i}`);
    const items = names.map((name, i) => ({ external_id: `U-${i}`, name, price: 1 }));
    const jsonl = join(dir, 'wide.jsonl');
    writeFileSync(jsonl, items.map((item) => JSON.stringify(item)).join('\n'));
    const array = join(dir, 'wide.json');
    writeFileSync(array, `[\n${items.map((item) => JSON.stringify({ ...item, external_id: `W${item.external_id}` })).join(',\n')}\n]`);
    for (const [file, prefix] of [[jsonl, ''], [array, 'W']] as const) {
      const result = await cli(['catalog', 'push', file]);
      expect(result.code).toBe(0);
      expect(names.every((name, i) => service.sandbox.getProduct(`${prefix}U-${i}`)?.name === name)).toBe(true);
    }
  });

  test('a JSON array number that cannot be sent exactly stops the run: exit 2, nothing sent', async () => {
    const file = join(dir, 'inexact.json');
    writeFileSync(file, '[\n{"external_id":"I-1","name":"a","price":1},\n{"external_id":"I-2","name":"b","price":0.1000000000000000055511}\n]');
    const before = service.requests.length;
    const result = await cli(['catalog', 'push', file]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Line 3: price 0\.1000000000000000055511 has more digits than can be sent exactly/)]);
    expect(service.requests.length).toBe(before);
  });

  test('--dry-run applies the SDK checks: a fourth decimal in stock_quantity or a bad store_id is rejected, exit 1', async () => {
    const file = join(dir, 'dry-stock.csv');
    writeFileSync(file, `external_id,store_id,stock_quantity,price_override\nS-1,${STORE},2.1234,\nS-2,${STORE},2.1230,null\nS-3,not-a-store,1,\n`);
    const before = service.requests.length;
    const result = await cli(['stock', 'push', file, '--dry-run', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ dry_run: true, items: 3, would_send: 1, rejected: 2 });
    const rows = readFileSync(`${file}.errors.csv`, 'utf8').trim().split('\n');
    expect(rows.slice(1)).toEqual([
      `2,S-1,${STORE},VALIDATION_ERROR,stock_quantity has 4 decimal places; at most 3 are kept and nothing is rounded`,
      expect.stringMatching(/^4,S-3,not-a-store,VALIDATION_ERROR,store_id is not a UUID/),
    ]);
    expect(service.requests.length).toBe(before);
  });

});

describe('stock push', () => {
  test('pushes stock with null price_override and reports store_id of rejected items', async () => {
    const file = join(dir, 'stock.csv');
    writeFileSync(file, `external_id,store_id,stock_quantity,price_override\nH-2,${STORE},7.5,null\nH-2,${STORE},8,\nNOPE-404,${STORE},1,\n`);
    const result = await cli(['stock', 'push', file, '--json']);
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.at(-1)).toMatchObject({ event: 'done', complete: true, updated: 1, errors: 2 });
    expect(result.code).toBe(1);
    const errors = readFileSync(`${file}.errors.csv`, 'utf8');
    expect(errors).toMatch(new RegExp(`\\n3,H-2,${STORE},VALIDATION_ERROR,`));
    expect(errors).toMatch(new RegExp(`\\n4,NOPE-404,${STORE},`));
    expect(service.sandbox.getProduct('H-2')!.stores[STORE]).toMatchObject({ stock_quantity: 7.5, price_override: null });
  });
});

describe('--resume', () => {
  test('Ctrl-C finishes the batch in flight and exits 130; --resume sends only the rest; a changed file is refused', async () => {
    const file = join(dir, 'big.csv');
    const rows = Array.from({ length: 5000 }, (_, i) => `R-${i},Item ${i},${(i % 100) + 0.5}`);
    writeFileSync(file, `external_id,name,price\n${rows.join('\n')}\n`);
    const first = service.requests.length;
    service.delayMs = 150;
    const interrupted = await cli(['catalog', 'push', file], {
      onStart: (child) => {
        const timer = setInterval(() => {
          if (sentProductIds(service.requests.slice(first)).length >= 1500) {
            clearInterval(timer);
            child.kill('SIGINT');
          }
        }, 10);
      },
    });
    service.delayMs = 0;
    expect(interrupted.code).toBe(130);
    expect(interrupted.stderr).toMatch(/--resume/);
    const checkpoint = JSON.parse(readFileSync(`${file}.checkpoint.json`, 'utf8')) as { records: number };
    const sentBefore = sentProductIds(service.requests.slice(first));
    expect(checkpoint.records).toBe(sentBefore.length); // the batch in flight finished and was recorded
    expect(checkpoint.records).toBeLessThan(5000);
    const saved = readFileSync(`${file}.checkpoint.json`);

    const second = service.requests.length;
    const resumed = await cli(['catalog', 'push', file, '--resume']);
    expect(resumed.code).toBe(0);
    const sentAfter = sentProductIds(service.requests.slice(second));
    expect(sentAfter).not.toContain(sentBefore.at(-1));
    expect(new Set([...sentBefore, ...sentAfter]).size).toBe(5000);
    expect(sentBefore.length + sentAfter.length).toBe(5000);
    expect(existsSync(`${file}.checkpoint.json`)).toBe(false);

    writeFileSync(`${file}.checkpoint.json`, saved);
    appendFileSync(file, 'R-extra,x,1\n');
    const third = service.requests.length;
    const refused = await cli(['catalog', 'push', file, '--resume']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/changed since the interrupted run/);
    expect(service.requests.length).toBe(third);
  }, 60_000);
});

describe('Ctrl-C', () => {
  test('while a batch is in flight: no new batch is sent, exit 130, the checkpoint names the next line; --resume sends the rest and still catches a repeat of an acknowledged id', async () => {
    const file = join(dir, 'gate.csv');
    const rows = Array.from({ length: 1500 }, (_, i) => `G-${i},Item ${i},${i + 1}`);
    writeFileSync(file, `external_id,name,price\n${rows.join('\n')}\nG-7,Again,1\n`);
    const first = service.requests.length;
    let release = () => {};
    service.hold = new Promise<void>((resolve) => (release = resolve));
    const interrupted = await cli(['catalog', 'push', file], {
      onStart: (child) => {
        const timer = setInterval(() => {
          if (sentProductIds(service.requests.slice(first)).length > 0) {
            clearInterval(timer);
            child.kill('SIGINT');
          }
        }, 5);
        // Answer the batch in flight only once the CLI has taken the Ctrl-C in.
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('Stopping')) release();
        });
      },
    });
    service.hold = undefined;
    expect(interrupted.code).toBe(130);
    expect(sentProductIds(service.requests.slice(first))).toHaveLength(500);
    expect(interrupted.stderr).toMatch(/up to line 501 was acknowledged .*--resume/);
    expect(JSON.parse(readFileSync(`${file}.checkpoint.json`, 'utf8'))).toMatchObject({ records: 500, nextLine: 502 });

    const second = service.requests.length;
    const resumed = await cli(['catalog', 'push', file, '--resume', '--json']);
    expect(resumed.code).toBe(1);
    expect(sentProductIds(service.requests.slice(second))).toEqual(rows.slice(500).map((r) => r.split(',')[0]));
    expect(readFileSync(`${file}.errors.csv`, 'utf8')).toMatch(/^line,external_id,store_id,code,message\n1502,G-7,,VALIDATION_ERROR,external_id repeated in the file \(first at line 9\)/);
  }, 60_000);

  test('while the file is still being read: exit 130 at once, nothing sent', async () => {
    const fifo = join(dir, 'fifo.csv');
    execFileSync('mkfifo', [fifo]);
    const before = service.requests.length;
    const result = await cli(['catalog', 'push', fifo], {
      onStart: (child) => {
        // Opening a FIFO for writing waits for its reader: the CLI is then reading the file. Its
        // exit waits for the blocked read, which the writer's close ends.
        void open(fifo, 'w').then((handle) => {
          let stderr = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
            if (stderr.includes('Interrupted')) void handle.close();
          });
          child.kill('SIGINT');
        });
      },
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/^Interrupted before anything was sent/);
    expect(service.requests.length).toBe(before);
  });
});

test('--resume with no checkpoint (nothing acknowledged, or the last run completed) starts from the beginning', async () => {
  const file = join(dir, 'fresh.jsonl');
  writeFileSync(file, '{"external_id":"F-1","name":"f","price":1}\n');
  const result = await cli(['catalog', 'push', file, '--resume']);
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/starting from the beginning/);
  expect(service.sandbox.getProduct('F-1')).toBeDefined();
});

test('no output of any run shows the key', () => {
  const secrets = [service.sandbox.keys.full, service.sandbox.keys.readOnly, service.sandbox.keys.full.split('_').at(-1)!];
  expect(outputs.length).toBeGreaterThan(10);
  for (const { stdout, stderr } of outputs) for (const secret of secrets) expect(`${stdout}${stderr}`).not.toContain(secret);
});
