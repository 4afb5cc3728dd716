// Signed deliveries posted over keep-alive sockets, as the service posts them, for the inbox figures.
import { Agent, request } from 'node:http';
import { signWebhook } from 'integration-sdk/webhooks';
import { orderCreatedOfSize } from './payloads.ts';

// A typical order of about 2 KB, valid against the SDK's OrderSchema.
const ORDER = orderCreatedOfSize(2048, 0).event.data;

let sequence = 0;

/** Posts one signed `order.created` (a new delivery id, and order id) to `path`; resolves with the answer's status. */
export function postDelivery(agent: Agent, port: number, path: string, secret: string): Promise<number> {
  sequence += 1;
  const deliveryId = `00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`;
  const { body, headers } = signWebhook({ payload: { event: 'order.created', data: { ...ORDER, order_id: deliveryId } }, secret, deliveryId });
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Deliveries per second: `count` of them, `concurrency` in flight, the n-th sent by `send(agent, n)`; any answer but 200 fails it. */
export async function throughput(count: number, send: (agent: Agent, n: number) => Promise<number>, concurrency = 16): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < count) {
        const status = await send(agent, sent++);
        if (status !== 200) throw new Error(`answer ${status}`);
      }
    }),
  );
  agent.destroy();
  return count / ((performance.now() - started) / 1000);
}
