// One "process" of the shared-budget test: a long bulk upsert of 1-item batches against the
// sandbox, paced by the Redis limiter. It records, on the wire, when each request left and what
// the sandbox answered (the client retries 429s silently), and prints them as JSON.
// argv: sandbox url, api key, redis url, items, requests per minute, burst, prefix.
import { createClient } from 'redis';
import { IntegrationClient } from 'integration-sdk';
import { redisRateLimiter } from 'integration-sdk/redis';

const [url = '', apiKey = '', redisUrl = '', itemsArg = '30', rpmArg = '600', burstArg = '10', prefix = 'test'] = process.argv.slice(2);
const redis = await createClient({ url: redisUrl }).on('error', () => {}).connect();
const sent: { at: number; status: number }[] = [];
const warnings: string[] = [];
const client = new IntegrationClient({
  apiKey,
  baseUrl: url,
  // What is measured here is the shared pacing: a generous Redis time-out keeps a loaded machine
  // (four processes starting at once) from sending a slow first call to the fallback, which has
  // its own test.
  rateLimit: redisRateLimiter({ redis, requestsPerMinute: Number(rpmArg), burst: Number(burstArg), prefix, redisTimeoutMs: 10_000 }),
  logger: { warn: (message) => void warnings.push(message) },
  fetch: async (input, init) => {
    const record = { at: Date.now(), status: 0 };
    sent.push(record);
    const response = await fetch(input, init);
    record.status = response.status;
    return response;
  },
});
const tag = `${process.pid}-${Math.random().toString(36).slice(2)}`;
const items = Array.from({ length: Number(itemsArg) }, (_, i) => ({ external_id: `${tag}-${i}`, name: `Product ${i}`, price: 1 }));
const result = await client.catalog.upsertProducts(items, { batchSize: 1, concurrency: 2 });
await redis.close();
console.log(JSON.stringify({ created: result.summary.created, sent, warnings }));
