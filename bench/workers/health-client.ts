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
import { BENCH_API_KEY, interleavedRounds, rawHealth, timeHealthCalls } from '../lib/health-rounds.ts';

const [url = '', callsArg = '2000', roundsArg = '3', blockArg = '100'] = process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);
const BLOCK = Number(blockArg);
const API_KEY = BENCH_API_KEY;
const route = `${url}/integration/v1/health`;
const headers = { 'X-API-Key': API_KEY, Accept: 'application/json' };

const sdk = new IntegrationClient({ apiKey: API_KEY, baseUrl: url, rateLimit: false, maxRetries: 0 });
const sdkBucket = new IntegrationClient({ apiKey: API_KEY, baseUrl: url, rateLimit: { requestsPerMinute: 1e9, burst: 1e9 }, maxRetries: 0 });
const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: `${url}/integration/v1`, maxRetries: 0 });

const clients: Record<string, () => Promise<unknown>> = {
  raw: rawHealth(url),
  sdk: () => sdk.health(),
  sdk_bucket: () => sdkBucket.health(),
  openai: () => openai.get('/health'),
  ky: async () => {
    const deadline = new AbortController();
    const response = await ky(route, { headers, retry: 0, timeout: false, throwHttpErrors: false, redirect: 'manual', signal: deadline.signal });
    return JSON.parse(await response.text()) as unknown;
  },
};

const rounds = await interleavedRounds(Object.keys(clients), (name, calls) => timeHealthCalls(clients[name]!, calls), { calls: CALLS, rounds: ROUNDS, block: BLOCK });
console.log(JSON.stringify({ calls: CALLS, rounds }));
