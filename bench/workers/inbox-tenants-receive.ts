// Receiving for many merchants (issue 28): deliveries per second through one inbox given a tenants
// registry of N connected tenants, spread over all of them, against an inbox given a registry of
// one tenant, all its deliveries to that one. Both in this process, on their own SQLite files, over
// keep-alive sockets; passes alternate so that both see the same machine. Every tenant has
// received a delivery before the passes (its secrets cached, as in a receiver that has run a while).
// argv: sandbox url, keys file, work dir, passes, deliveries per pass. Prints { one: [...], many: [...] } (per second).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInbox } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { createTenants } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { signWebhook } from 'integration-sdk/webhooks';
import { orderCreatedOfSize } from '../lib/payloads.ts';
import { inBatches, secretRecorder, UNLIMITED } from '../lib/tenants-connect.ts';

const [sandboxUrl = '', keysFile = '', dir = '', passesArg = '5', perPassArg = '2000'] = process.argv.slice(2);
const keys = JSON.parse(readFileSync(keysFile, 'utf8')) as string[];
const ORDER = orderCreatedOfSize(2048, 0).event.data;

async function receiver(name: string, ids: readonly string[]) {
  let port = 0;
  const recorder = secretRecorder();
  const tenants = createTenants({
    store: sqliteTenantStore({ path: join(dir, `${name}-tenants.db`) }),
    encryptionKey: randomBytes(32).toString('base64'),
    baseUrl: sandboxUrl,
    webhookUrl: (id) => `http://127.0.0.1:${port}/webhooks/integration/${id}`,
    clientOptions: { fetch: recorder.fetch },
    ...UNLIMITED,
  });
  const inbox = createInbox({ tenants, store: sqliteStore({ path: join(dir, `${name}-inbox.db`) }) });
  const server = createServer(inbox.handler.node);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  await inBatches(ids, (id, index) => tenants.connect(id, { apiKey: keys[index]! }));
  return {
    port,
    secretOf: (id: string) => recorder.secrets.get(id)!,
    async close() {
      server.closeAllConnections();
      server.close();
      await inbox.close();
      await tenants.close();
    },
  };
}

let sequence = 0;
function post(agent: Agent, port: number, tenant: string, secret: string): Promise<number> {
  sequence += 1;
  const deliveryId = `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`;
  const { body, headers } = signWebhook({ payload: { event: 'order.created', data: { ...ORDER, order_id: deliveryId } }, secret, deliveryId });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `/webhooks/integration/${tenant}`, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Deliveries per second, `concurrency` in flight, each to the tenant `pick` names. */
async function throughput(port: number, count: number, pick: (n: number) => string, secretOf: (id: string) => string, concurrency = 16): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < count) {
        const tenant = pick(sent++);
        const status = await post(agent, port, tenant, secretOf(tenant));
        if (status !== 200) throw new Error(`answer ${status} for ${tenant}`);
      }
    }),
  );
  agent.destroy();
  return count / ((performance.now() - started) / 1000);
}

const ids = keys.map((_, i) => `tenant-${i}`);
const many = await receiver('many', ids);
const one = await receiver('one', ids.slice(0, 1));
// Every tenant receives one delivery first: its secrets are read once and cached.
await throughput(many.port, ids.length, (n) => ids[n]!, many.secretOf);
await throughput(one.port, 200, () => ids[0]!, one.secretOf);
// Spread: each delivery to a tenant drawn at random, as deliveries of many merchants arrive.
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
const result = { tenants: ids.length, one: [] as number[], many: [] as number[] };
for (let pass = 0; pass < Number(passesArg); pass += 1) {
  result.one.push(await throughput(one.port, Number(perPassArg), () => ids[0]!, one.secretOf));
  result.many.push(await throughput(many.port, Number(perPassArg), () => ids[Math.floor(random() * ids.length)]!, many.secretOf));
}
await many.close();
await one.close();
console.log(JSON.stringify(result));
