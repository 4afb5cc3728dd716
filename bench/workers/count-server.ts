// A server that only counts: it reads each POST /products/bulk body, counts its items and answers
// a valid bulk response (one `created` result per item, the shape of BulkUpsertResponseSchema),
// keeping nothing. Against it, the 1M stream figure measures the client's memory alone.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let itemsSeen = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'GET') {
      // GET /health, for the delta sync, which asks it once per run.
      const health = JSON.stringify({ status: 'ok', merchant_id: 'count-server', store_ids: [], scopes: ['catalog:write'], ts: new Date().toISOString() });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(health)) });
      res.end(health);
      return;
    }
    const { items } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: { external_id: string }[] };
    itemsSeen += items.length;
    const body = JSON.stringify({
      sync_id: randomUUID(),
      summary: { created: items.length, updated: 0, errors: 0 },
      results: items.map((item, index) => ({ index, external_id: item.external_id, status: 'created' })),
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
});
process.on('SIGTERM', () => {
  process.stderr.write(`count-server: ${itemsSeen} items\n`);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
