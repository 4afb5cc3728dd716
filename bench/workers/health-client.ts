// Client overhead: sequential GET /health calls against bench/workers/health-server.ts (another
// process), every client in this one process. Each round makes CALLS sequential calls per client,
// in blocks of BLOCK calls taken in turn by the clients: on a machine shared with other work,
// load that comes and goes within a round then hits every client alike. Prints, per client, the
// total time of its CALLS calls in each round.
//   raw        – fetch + JSON.parse: the baseline;
//   sdk        – IntegrationClient#health with rateLimit: false (the default bucket would pace
//                2,000 calls at 2/s after its burst of 120);
//   sdk_bucket – the same with a token bucket too large ever to wait: what the default limiter's
//                bookkeeping costs per call;
//   openai     – openai-node's client.get on the same route, maxRetries: 0;
//   ky         – ky alone with the options the SDK passes it (signal, redirect: 'manual', no retry,
//                no timeout), then text + JSON.parse: a diagnostic, the share of the SDK's overhead
//                that is ky's rather than its own pipeline's (p-retry, deadline timer, zod).
import ky from 'ky';
import OpenAI from 'openai';
import { IntegrationClient } from 'integration-sdk';

const [url = '', callsArg = '2000', roundsArg = '3', blockArg = '100'] = process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);
const BLOCK = Number(blockArg);
const API_KEY = 'service_bench_secretsecretsecret';
const route = `${url}/integration/v1/health`;
const headers = { 'X-API-Key': API_KEY, Accept: 'application/json' };

const sdk = new IntegrationClient({ apiKey: API_KEY, baseUrl: url, rateLimit: false, maxRetries: 0 });
const sdkBucket = new IntegrationClient({ apiKey: API_KEY, baseUrl: url, rateLimit: { requestsPerMinute: 1e9, burst: 1e9 }, maxRetries: 0 });
const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: `${url}/integration/v1`, maxRetries: 0 });

const clients: Record<string, () => Promise<unknown>> = {
  raw: async () => {
    const response = await fetch(route, { headers });
    if (!response.ok) throw new Error(`raw: HTTP ${response.status}`);
    return JSON.parse(await response.text()) as unknown;
  },
  sdk: () => sdk.health(),
  sdk_bucket: () => sdkBucket.health(),
  openai: () => openai.get('/health'),
  ky: async () => {
    const deadline = new AbortController();
    const response = await ky(route, { headers, retry: 0, timeout: false, throwHttpErrors: false, redirect: 'manual', signal: deadline.signal });
    return JSON.parse(await response.text()) as unknown;
  },
};

async function timeCalls(call: () => Promise<unknown>, calls: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i += 1) {
    const body = (await call()) as { status?: string };
    if (body.status !== 'ok') throw new Error('unexpected /health body');
  }
  return performance.now() - start;
}

const names = Object.keys(clients);
for (const name of names) await timeCalls(clients[name]!, 300); // JIT and open the keep-alive sockets
const rounds: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  const total: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  for (let block = 0; block < CALLS / BLOCK; block += 1) {
    // Rotate who goes first in each block: none always follows the same neighbour.
    for (let i = 0; i < names.length; i += 1) {
      const name = names[(i + block) % names.length]!;
      total[name]! += await timeCalls(clients[name]!, BLOCK);
    }
  }
  for (const name of names) rounds[name]!.push(total[name]!);
}
console.log(JSON.stringify({ calls: CALLS, rounds }));
