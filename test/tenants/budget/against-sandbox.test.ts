// The budget against the sandbox's own buckets at the service's rates (120/min per key, 300/min per
// IP): three keys of the seeded merchant want 360 at once and 6/s after, more than the IP allows.
// Through the budget, no request meets a 429 after the first second (the first second may: the
// sandbox's IP bucket starts refilling when the first request arrives, ours a little later).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { createTenantBudget, type TenantBudget } from '../../../src/tenants/budget/index.ts';
import { recordingFetch } from '../../../bench/lib/recording-fetch.ts';

const RUN_MS = 6_000;
const CONCURRENCY = 6;

let sandbox: Sandbox;
let budget: TenantBudget;

beforeAll(async () => {
  sandbox = await createSandbox(); // the service's buckets, the per-IP one included
  budget = createTenantBudget({});
});
afterAll(async () => {
  await budget?.close();
  await sandbox?.close();
});

describe('several keys of one merchant against the sandbox, its per-IP bucket on', () => {
  it('draw no 429 after the first second, and use the IP budget', { timeout: 30_000 }, async () => {
    const { fetch: recording, sent } = recordingFetch();
    const clientOf = (tenant: string, apiKey: string) =>
      new IntegrationClient({ apiKey, baseUrl: sandbox.url, fetch: recording, maxRetries: 10, rateLimit: budget.limiterFor(tenant) });
    const pusher = clientOf('pusher', sandbox.keys.full);
    const tills = [clientOf('till-a', sandbox.keys.oneStore), clientOf('till-b', sandbox.keys.readOnly)];
    const endAt = Date.now() + RUN_MS;
    let item = 0;
    const loop = async (call: () => Promise<unknown>) => {
      while (Date.now() < endAt) await call();
    };
    await Promise.all([
      ...Array.from({ length: CONCURRENCY }, () =>
        loop(() => pusher.catalog.upsertProducts([{ external_id: `SKU-B${(item += 1)}`, name: 'Item', price: 1, stores: [{ store_id: sandbox.storeIds[0]!, stock_quantity: 1 }] }])),
      ),
      ...tills.flatMap((till) => Array.from({ length: CONCURRENCY }, () => loop(() => till.health()))),
    ]);
    const t0 = sent[0]!.at;
    const late429s = sent.filter((request) => request.status === 429 && request.at - t0 >= 1_000);
    expect(late429s).toEqual([]);
    const elapsedS = (sent.at(-1)!.at - t0) / 1000;
    expect(sent.length).toBeGreaterThan(0.8 * (300 + 5 * elapsedS));
  });
});
