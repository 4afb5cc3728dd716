// One read of a CSV file through csv-parse with the options the CLI uses, and nothing else: the
// least any push must spend before its first request, since a malformed file must send nothing.
// argv: the file. Prints the row count and the read's time (process start-up excluded).
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

const [file = ''] = process.argv.slice(2);
const start = performance.now();
let rows = 0;
for await (const _record of createReadStream(file).pipe(parse({ bom: true, columns: true, raw: true, skip_empty_lines: true }))) rows++;
console.log(JSON.stringify({ rows, ms: performance.now() - start }));
