// Rate-limit fidelity: a long bulk run of 1-item batches where the sandbox's per-key bucket and the
// client's bucket are set to the same rate. The fetch handed to the client records when each
// request left and what the sandbox answered: the client retries 429s silently, so they are
// counted here, on the wire. argv: sandbox url, api key, store id, requests per minute, burst,
// seconds to run.
import { IntegrationClient } from 'integration-sdk';
import { products } from '../lib/products.ts';

const [url = '', apiKey = '', storeId = '', perMinuteArg = '1200', burstArg = '120', secondsArg = '42'] = process.argv.slice(2);
const perMinute = Number(perMinuteArg);
const burst = Number(burstArg);
const seconds = Number(secondsArg);
// The burst, then what the rate allows in `seconds`: the run lasts about that long.
const count = burst + Math.round((perMinute / 60) * seconds);

const sent: { at: number; status: number }[] = [];
const observed: typeof fetch = async (input, init) => {
  const record = { at: performance.now(), status: 0 };
  sent.push(record);
  const response = await fetch(input, init);
  record.status = response.status;
  return response;
};

const client = new IntegrationClient({ apiKey, baseUrl: url, rateLimit: { requestsPerMinute: perMinute, burst }, fetch: observed });
const result = await client.catalog.upsertProducts(products(count, storeId), { batchSize: 1, concurrency: 4 });
if (result.summary.created !== count) throw new Error(`${result.summary.created} of ${count} products created`);

const t0 = sent[0]!.at;
const elapsedS = (sent.at(-1)!.at - t0) / 1000;
const perSecond: number[] = [];
for (const { at } of sent) {
  const second = Math.floor((at - t0) / 1000);
  perSecond[second] = (perSecond[second] ?? 0) + 1;
}
const afterFirstSecond = sent.filter(({ at }) => at - t0 >= 1000);
// From 5 s on, the tokens refilled while the burst was being sent are spent too: the pace alone.
const afterFiveSeconds = sent.filter(({ at }) => at - t0 >= 5000);
console.log(
  JSON.stringify({
    items: count,
    requests: sent.length,
    elapsedS,
    allowed: burst + (perMinute / 60) * elapsedS,
    steadyRequests: afterFirstSecond.length,
    steadySeconds: elapsedS - 1,
    pacedRequests: afterFiveSeconds.length,
    pacedSeconds: elapsedS - 5,
    status429Total: sent.filter((r) => r.status === 429).length,
    status429AfterBurst: sent.slice(burst).filter((r) => r.status === 429).length,
    status429AfterFirstSecond: afterFirstSecond.filter((r) => r.status === 429).length,
    perSecond: Array.from(perSecond, (n) => n ?? 0),
  }),
);
