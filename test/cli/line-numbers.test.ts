// The errors file's `line` and the repeat message's "first at line N" are the physical line a record
// starts on, whatever the line endings: catalog push and stock push, CSV, JSON Lines and a JSON
// array, LF and CRLF (what Excel and most ERPs write), a quoted CSV field holding a line break.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runCli, startProxiedSandbox, type ProxiedSandbox } from './helpers.ts';

const STORE = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
let service: ProxiedSandbox;
let dir: string;
let env: Record<string, string>;

/**
 * Each file: lines of text (joined with the ending under test), the lines the errors file must name
 * in order (a service rejection, a local one, a repeat), and the line the repeat's first occurrence is on.
 */
interface Case {
  lines: (p: string) => string[];
  rejected: number[];
  first: number;
}

const CASES: Record<'catalog' | 'stock', Record<'csv' | 'jsonl' | 'json', Case>> = {
  catalog: {
    csv: {
      lines: (p) => [
        'external_id,name,price',
        `${p}K-1,"two`,
        ` lines",1`,
        '',
        `${p}K-2,,`, // a new product without a name: rejected by the service
        `${p}K-3,negative,-1`, // rejected locally
        `${p}K-1,again,2`,
      ],
      rejected: [5, 6, 7],
      first: 2,
    },
    jsonl: {
      lines: (p) => [
        `{"external_id":"${p}K-1","name":"one","price":1}`,
        '',
        `{"external_id":"${p}K-2"}`,
        `{"external_id":"${p}K-3","name":"negative","price":-1}`,
        `{"external_id":"${p}K-1","name":"again","price":2}`,
      ],
      rejected: [3, 4, 5],
      first: 1,
    },
    json: {
      lines: (p) => [
        '[',
        `  {"external_id":"${p}K-1",`,
        '   "name":"one","price":1},',
        '',
        `  {"external_id":"${p}K-2"},`,
        `  {"external_id":"${p}K-3","name":"negative","price":-1},`,
        `  {"external_id":"${p}K-1","name":"again","price":2}`,
        ']',
      ],
      rejected: [5, 6, 7],
      first: 2,
    },
  },
  stock: {
    csv: {
      lines: (p) => [
        'external_id,store_id,stock_quantity',
        `"${p}S-two`, // an id holding a line break: no such product
        `lines",${STORE},1`,
        '',
        `${p}S-1,${STORE},1`,
        `${p}S-1,not-a-uuid,1`,
        `${p}S-1,${STORE},2`,
      ],
      rejected: [2, 6, 7],
      first: 5,
    },
    jsonl: {
      lines: (p) => [
        `{"external_id":"${p}S-missing","store_id":"${STORE}","stock_quantity":1}`,
        '',
        `{"external_id":"${p}S-1","store_id":"${STORE}","stock_quantity":1}`,
        `{"external_id":"${p}S-1","store_id":"not-a-uuid","stock_quantity":1}`,
        `{"external_id":"${p}S-1","store_id":"${STORE}","stock_quantity":2}`,
      ],
      rejected: [1, 4, 5],
      first: 3,
    },
    json: {
      lines: (p) => [
        '[',
        `  {"external_id":"${p}S-missing",`,
        `   "store_id":"${STORE}","stock_quantity":1},`,
        '',
        `  {"external_id":"${p}S-1","store_id":"${STORE}","stock_quantity":1},`,
        `  {"external_id":"${p}S-1","store_id":"not-a-uuid","stock_quantity":1},`,
        `  {"external_id":"${p}S-1","store_id":"${STORE}","stock_quantity":2}`,
        ']',
      ],
      rejected: [2, 6, 7],
      first: 5,
    },
  },
};

const ENDINGS = { LF: '\n', CRLF: '\r\n' } as const;
const combinations = (['catalog', 'stock'] as const).flatMap((kind) =>
  (['csv', 'jsonl', 'json'] as const).flatMap((format) => (['LF', 'CRLF'] as const).map((ending) => ({ kind, format, ending }))));
const prefix = (c: { kind: string; format: string; ending: string }) => `${c.kind}-${c.format}-${c.ending}-`;

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-lines-'));
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
  // The products the stock files update.
  const seed = join(dir, 'seed.jsonl');
  writeFileSync(seed, combinations.map((c) => JSON.stringify({ external_id: `${prefix(c)}S-1`, name: 's', price: 1 })).join('\n'));
  expect((await runCli(['catalog', 'push', seed], { env })).code).toBe(0);
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

test.each(combinations)('$kind push, $format, $ending: the errors file names the line each rejected record starts on', async (c) => {
  const { lines, rejected, first } = CASES[c.kind][c.format];
  const file = join(dir, `${prefix(c)}items.${c.format}`);
  writeFileSync(file, `${lines(prefix(c)).join(ENDINGS[c.ending])}${ENDINGS[c.ending]}`);
  const result = await runCli([c.kind, 'push', file, '--json'], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(1);
  const rows = parse(readFileSync(`${file}.errors.csv`, 'utf8'), { from_line: 2 }) as string[][];
  expect(rows.map((row) => Number(row[0]))).toEqual(rejected);
  expect(rows.at(-1)?.[4]).toMatch(new RegExp(`repeated in the file \\(first at line ${first}\\)`));
}, 20_000);

test.each(['LF', 'CRLF'] as const)('a CSV that cannot be read names the line its bad record starts on, after quoted line breaks (%s)', async (ending) => {
  const file = join(dir, `malformed-${ending}.csv`);
  // The bad record (one field too many) starts on line 5, after a field holding two line breaks.
  writeFileSync(file, ['external_id,name,price', 'A,"x', 'y', 'z",1', 'B,b,1,9', ''].join(ENDINGS[ending]));
  const result = await runCli(['catalog', 'push', file, '--dry-run']);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/^Line 5: the CSV cannot be read/);
  expect(result.stderr).not.toMatch(/on line \d/);
});

test.each(['LF', 'CRLF'] as const)('a bad CSV record far into the file (line 2,802, parsed in the same read as the good records before it) is named by its own line, not line 2 (%s)', async (ending) => {
  const file = join(dir, `late-malformed-${ending}.csv`);
  const good = (i: number) => `G-${i},good,1`;
  // Line 2 opens a field over two lines; lines 4 to 2,801 are good; line 2,802 has a field too many.
  const lines = ['external_id,name,price', 'Q,"two', 'lines",1', ...Array.from({ length: 2798 }, (_, i) => good(i)), 'BAD,b,1,9', ...Array.from({ length: 200 }, (_, i) => good(3000 + i))];
  writeFileSync(file, `${lines.join(ENDINGS[ending])}${ENDINGS[ending]}`);
  const result = await runCli(['catalog', 'push', file, '--dry-run']);
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/^Line 2802: the CSV cannot be read \(Invalid Record Length/);
});
