// CSV as spreadsheets write it: the delimiter detected from the header line (`,` `;` tab) or given
// with --delimiter, numbers written with a decimal comma refused, never converted, booleans and
// long numbers as Excel writes them. The reader runs in process; the pt-BR exports are pushed by the
// CLI against the sandbox.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readItems, type InputRecord, type PushKind, type ReadOptions } from '../../src/cli/input.ts';
import { DECIDING_CELLS } from '../../src/cli/decimal.ts';
import { runCli, startProxiedSandbox, type ProxiedSandbox } from './helpers.ts';

const STORE = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
let dir: string;
let count = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-csv-'));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function csv(content: string): string {
  const file = join(dir, `file-${++count}.csv`);
  writeFileSync(file, content);
  return file;
}

async function read(content: string, kind: PushKind = 'catalog', options: ReadOptions = {}): Promise<InputRecord[]> {
  const records: InputRecord[] = [];
  for await (const record of readItems(csv(content), kind, 'csv', options)) records.push(record);
  return records;
}

/** The message the reader stops with (a file error), or `undefined` when it read the whole file. */
async function refusal(content: string, kind: PushKind = 'catalog', options: ReadOptions = {}): Promise<string | undefined> {
  return read(content, kind, options).then(() => undefined, (error: Error) => error.message);
}

describe('the delimiter', () => {
  test.each([
    ['comma', ','],
    ['semicolon', ';'],
    ['tab', '\t'],
  ])('%s is detected from the header line; a quoted field may hold the others', async (_, d) => {
    const records = await read([`external_id${d}name${d}price`, `A-1${d}"Arroz; 1kg, tipo 1\tbranco"${d}19.90`, `A-2${d}Feijão${d}7`, ''].join('\r\n'));
    expect(records.map((r) => r.item)).toEqual([
      { external_id: 'A-1', name: 'Arroz; 1kg, tipo 1\tbranco', price: 19.9 },
      { external_id: 'A-2', name: 'Feijão', price: 7 },
    ]);
  });

  test('--delimiter names it: a header that does not split into known columns there says where it does', async () => {
    const content = 'external_id;name;price\nA-1;a;1\n';
    expect((await read(content, 'catalog', { delimiter: ';' }))[0]?.item).toEqual({ external_id: 'A-1', name: 'a', price: 1 });
    expect(await refusal(content, 'catalog', { delimiter: ',' })).toBe(
      'Line 1: the header does not split into known columns at --delimiter "," (it does at ";": pass --delimiter ;, or leave --delimiter out to detect it): unknown column "external_id;name;price"; allowed: external_id,name,price,gtin,category,store_id,stock_quantity,price_override,active; fix the file and run again (nothing was sent).',
    );
    expect((await read('external_id\tstore_id\tstock_quantity\nS-1\t' + STORE + '\t3\n', 'stock', { delimiter: 'tab' }))[0]?.item).toEqual({ external_id: 'S-1', store_id: STORE, stock_quantity: 3 });
  });

  test('a header that splits into no known column names the delimiter seen and suggests --delimiter', async () => {
    expect(await refusal('id;nome;preço\nA;a;1\n')).toMatch(
      /^Line 1: the header does not split into known columns at ";", the delimiter seen in it: unknown column "id", "nome", "preço"; allowed: .*; if the file uses another delimiter, name it with --delimiter , ; or tab; fix the file/,
    );
    expect(await refusal('external_id|name|price\nA|a|1\n')).toMatch(/^Line 1: the header does not split into known columns at , ; or tab: none of them is in it: unknown column "external_id\|name\|price"; .*--delimiter , ; or tab/);
    // Known columns and a typo: the column is named, the delimiter worked.
    expect(await refusal('external_id;name;prce\nA;a;1\n')).toMatch(/^Line 1: unknown column "prce"; allowed: .* \(the header split at ";"\); fix the file/);
  });
});

describe('a decimal comma', () => {
  test('one among numbers written with a point: that item is rejected with its hint, the rest are read', async () => {
    const records = await read('external_id;name;price\nA-1;a;19.90\nA-2;b;12,5\nA-3;c;7.25\n');
    expect(records.map((r) => [r.line, r.external_id, r.item ?? r.error?.message])).toEqual([
      [2, 'A-1', { external_id: 'A-1', name: 'a', price: 19.9 }],
      [3, 'A-2', 'price is written with a decimal comma ("12,5"); numbers are never converted: write it with a decimal point'],
      [4, 'A-3', { external_id: 'A-3', name: 'c', price: 7.25 }],
    ]);
  });

  test('in a store column of a catalog row, or a stock row: the item is rejected', async () => {
    const catalog = await read(`external_id;name;price;store_id;stock_quantity;price_override\nC-1;c;1.5;${STORE};2;\nC-1;;;b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d;1;8,99\nC-2;d;2.5;;;\n`);
    expect(catalog.map((r) => r.error?.message ?? 'ok')).toEqual(['price_override is written with a decimal comma ("8,99"); numbers are never converted: write it with a decimal point', 'ok']);
    const stock = await read(`external_id;store_id;stock_quantity\nS-1;${STORE};1.5\nS-2;${STORE};2,5\nS-3;${STORE};3.5\n`, 'stock');
    expect(stock.map((r) => r.error?.message ?? r.item?.stock_quantity)).toEqual([1.5, 'stock_quantity is written with a decimal comma ("2,5"); numbers are never converted: write it with a decimal point', 3.5]);
  });

  test(`how the file writes its numbers (most of its first ${DECIDING_CELLS} numbers with a fraction use a comma): the whole file is refused, naming the first`, async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `P-${i};p;${i},${i % 2 === 0 ? '5' : '25'}`);
    const message = await refusal(['external_id;name;price', 'P-x;whole numbers do not count;10', ...rows].join('\r\n'));
    expect(message).toBe('Line 3: the file writes its decimal numbers with a comma (price "0,5"), as a spreadsheet set to a comma locale such as pt-BR saves them, and numbers are never converted: save it with a decimal point (Excel: File › Options › Advanced, untick "Use system separators", decimal separator "."); fix the file and run again (nothing was sent).');
    // Fewer numbers with a fraction than that: judged on those, at the end of the file.
    expect(await refusal('external_id;name;price\nA;a;1\nB;b;2,5\nC;c;3\n')).toMatch(/^Line 3: the file writes its decimal numbers with a comma \(price "2,5"\)/);
    expect(await refusal('external_id;name;price\nA;a;1.5\nB;b;2,5\n')).toBeUndefined(); // half, not most
    // Thousands points before the comma, a negative number: a decimal comma too.
    expect(await refusal('external_id;name;price\nA;a;1.234,56\nB;b;-0,5\n')).toMatch(/^Line 2: .*\(price "1\.234,56"\)/);
  });
});

describe('cells as Excel writes them', () => {
  test('active: true or false in any case (Excel in English writes TRUE), or VERDADEIRO and FALSO (Excel in Portuguese); anything else stops the run', async () => {
    const rows = ['TRUE', 'FALSE', 'true', 'false', 'VERDADEIRO', 'FALSO', 'Verdadeiro', 'falso'].map((active, i) => `A-${i};${STORE};${i};${active}`);
    const records = await read(['external_id;store_id;stock_quantity;active', ...rows, ''].join('\r\n'), 'stock');
    expect(records.map((r) => r.item?.active)).toEqual([true, false, true, false, true, false, true, false]);
    expect(await refusal(`external_id;store_id;active\nA;${STORE};sim\n`, 'stock')).toBe(
      'Line 2: active must be true or false (or VERDADEIRO or FALSO, as Excel in Portuguese writes them), got "sim"; fix the file and run again (nothing was sent).',
    );
  });

  test('a gtin Excel wrote in scientific notation (7,891E+12: its digits lost) is an item error with the way out; a gtin of digits is read', async () => {
    const records = await read('external_id;name;price;gtin\nG-1;a;1;7,891E+12\nG-2;b;2;7891000200104\nG-3;c;3;7.89100E+12\nG-4;d;4;1e5\n');
    const hint = (text: string) => `gtin is written in scientific notation ("${text}"), as Excel shows a long number, and its digits are lost: format the gtin column as text (Format Cells › Text), type the codes again and save`;
    expect(records.map((r) => [r.line, r.external_id, r.item ?? r.error?.message])).toEqual([
      [2, 'G-1', hint('7,891E+12')],
      [3, 'G-2', { external_id: 'G-2', name: 'b', price: 2, gtin: '7891000200104' }],
      [4, 'G-3', hint('7.89100E+12')],
      [5, 'G-4', hint('1e5')],
    ]);
  });
});

describe('a pt-BR spreadsheet export against the sandbox', () => {
  let service: ProxiedSandbox;
  let env: Record<string, string>;

  beforeAll(async () => {
    service = await startProxiedSandbox();
    env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
  });

  afterAll(async () => {
    await service.close();
  });

  // examples/catalog-pt-br.csv is what Excel in pt-BR saves as "CSV UTF-8 (separado por vírgulas)":
  // a BOM, `;`, CRLF, quotes around a field holding a `;` or a quote, accented names; its prices are
  // whole or typed as text with a point.
  const EXPORT = readFileSync(fileURLToPath(new URL('../../examples/catalog-pt-br.csv', import.meta.url)), 'utf8');

  test('pushes without options (examples/catalog-pt-br.csv)', async () => {
    expect(EXPORT).toMatch(/^\uFEFFexternal_id;name;price;.*\r\n/);
    const file = csv(EXPORT);
    const result = await runCli(['catalog', 'push', file], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/3\/3 items, created 3, updated 0, errors 0/);
    expect(service.sandbox.getProduct('SKU-2001')).toMatchObject({ name: 'Café Torrado e Moído; 500g', price: 24.9, category: 'Mercearia' });
    expect(service.sandbox.getProduct('SKU-2001')!.stores[STORE]).toMatchObject({ stock_quantity: 40 });
    expect(service.sandbox.getProduct('SKU-2002')).toMatchObject({ name: 'Pão de Queijo "Mineiro" 1kg', price: 32 });
    expect(Object.keys(service.sandbox.getProduct('SKU-2002')!.stores)).toHaveLength(2);
  });

  // examples/catalog-pt-br-excel.csv is what Excel in pt-BR saves as "CSV (separado por vírgulas)":
  // windows-1252 (an en dash "–" Latin-1 lacks), no BOM, `;`, CRLF, quotes around a field holding a
  // `;` or a quote, VERDADEIRO/FALSO; its prices are whole or typed as text with a point, and its gtin
  // column is formatted as text.
  const EXCEL = readFileSync(fileURLToPath(new URL('../../examples/catalog-pt-br-excel.csv', import.meta.url)));
  const EXCEL_NOTE = /^\S+ is not UTF-8 \(line 2 is the first that is not\): reading it as windows-1252, what Excel saves as "CSV \(separado por vírgulas\)"; if it was saved in another encoding, name it with --encoding \(such as latin1, iso-8859-15 or ibm850\)\.$/;

  test('the Excel export in windows-1252 pushes without options, saying in one line how it was read (examples/catalog-pt-br-excel.csv)', async () => {
    expect(EXCEL.subarray(0, 12).toString()).toBe('external_id;');
    expect(EXCEL.includes(0x96)).toBe(true); // "–" in windows-1252
    const file = join(dir, 'excel.csv');
    writeFileSync(file, EXCEL);
    const result = await runCli(['catalog', 'push', file], { env });
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(EXCEL_NOTE)]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/3\/3 items, created 3, updated 0, errors 0/);
    expect(service.sandbox.getProduct('SKU-3001')).toMatchObject({ name: 'Café Torrado e Moído 500g', price: 24.9, gtin: '7891000200104' });
    expect(service.sandbox.getProduct('SKU-3001')!.stores[STORE]).toMatchObject({ stock_quantity: 40, active: true });
    expect(service.sandbox.getProduct('SKU-3002')).toMatchObject({ name: 'Pão de Queijo "Mineiro"; 1kg', price: 32 });
    expect(service.sandbox.getProduct('SKU-3002')!.stores['b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d']).toMatchObject({ stock_quantity: 0, price_override: 29.9, active: false });
    expect(service.sandbox.getProduct('SKU-3003')).toMatchObject({ name: 'Açúcar Cristal 5kg – pacote', price: 21.5 });
  });

  test('the same Excel export with its prices as Excel writes numbers (24,90): read as windows-1252, then refused whole for its decimal commas, nothing sent', async () => {
    const text = new TextDecoder('windows-1252').decode(EXCEL).replaceAll('.90', ',90').replace('21.5', '21,5').replaceAll('SKU-', 'XLS-');
    const file = join(dir, 'excel-commas.csv');
    writeFileSync(file, Buffer.from(text, 'latin1'));
    const before = service.requests.length;
    const result = await runCli(['catalog', 'push', file], { env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(EXCEL_NOTE), expect.stringMatching(/^Line 2: the file writes its decimal numbers with a comma \(price "24,90"\).*\(nothing was sent\)\.$/)]);
    expect(service.requests.length).toBe(before);
  });

  test('the same export with its prices written 24,90: refused whole before anything is sent, exit 2, one sentence', async () => {
    const file = csv(EXPORT.replaceAll('.90', ',90').replace('21.5', '21,5').replaceAll('SKU-', 'BRC-'));
    const before = service.requests.length;
    const result = await runCli(['catalog', 'push', file], { env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Line 2: the file writes its decimal numbers with a comma \(price "24,90"\).*\(nothing was sent\)\.$/)]);
    expect(service.requests.length).toBe(before);
    expect(() => readFileSync(`${file}.errors.csv`)).toThrow();
  });
});
