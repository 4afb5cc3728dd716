// A bare node:http server answering every request with the same /health body: the least a server
// can do, so that what differs between the clients measured against it is the clients.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const BODY = JSON.stringify({
  status: 'ok',
  merchant_id: '9d7f5c1e-2b1a-4c57-9a3e-0d6c1b2a3f4e',
  store_ids: [],
  scopes: ['catalog:write', 'stock:write', 'orders:read', 'webhooks:manage', 'loyalty:read', 'loyalty:write'],
  ts: '2026-11-21T12:00:00.000Z',
});
const HEADERS = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) };

const server = createServer((req, res) => {
  req.resume(); // GETs carry no body; drain anyway so keep-alive is never stalled
  res.writeHead(200, HEADERS);
  res.end(BODY);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }));
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
