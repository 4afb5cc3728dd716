// Cost of integration-sdk/otel: sequential GET /health calls against bench/workers/health-server.ts
// (another process). The channels are process-wide, so the instrumentation is switched on only
// around the `sdk_otel` client's blocks; every other block runs with no subscriber at all.
//   raw      – fetch + JSON.parse: the baseline;
//   sdk      – IntegrationClient#health, rateLimit: false, maxRetries: 0, nobody subscribed;
//   sdk_otel – the same client with instrumentIntegrationSdk on: real SDK tracer and meter
//              providers, a BatchSpanProcessor whose exporter drops the spans (the export itself
//              is the exporter's cost, not ours), metrics aggregated but never exported.
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { IntegrationClient } from 'integration-sdk';
import { instrumentIntegrationSdk } from 'integration-sdk/otel';

const [url = '', callsArg = '2000', roundsArg = '3', blockArg = '100'] = process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);
const BLOCK = Number(blockArg);
const API_KEY = 'service_bench_secretsecretsecret';
const route = `${url}/integration/v1/health`;
const headers = { 'X-API-Key': API_KEY, Accept: 'application/json' };

let exported = 0;
const droppingExporter: SpanExporter = {
  export(spans: ReadableSpan[], done) {
    exported += spans.length;
    done({ code: 0 });
  },
  async shutdown() {},
};
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(droppingExporter)] });
const meterProvider = new MeterProvider();
const sdk = new IntegrationClient({ apiKey: API_KEY, baseUrl: url, rateLimit: false, maxRetries: 0 });

const clients: Record<string, () => Promise<unknown>> = {
  raw: async () => {
    const response = await fetch(route, { headers });
    if (!response.ok) throw new Error(`raw: HTTP ${response.status}`);
    return JSON.parse(await response.text()) as unknown;
  },
  sdk: () => sdk.health(),
  sdk_otel: () => sdk.health(),
};

async function timeCalls(name: string, calls: number): Promise<number> {
  const stop = name === 'sdk_otel' ? instrumentIntegrationSdk({ tracerProvider, meterProvider }) : undefined;
  const start = performance.now();
  try {
    for (let i = 0; i < calls; i += 1) {
      const body = (await clients[name]!()) as { status?: string };
      if (body.status !== 'ok') throw new Error('unexpected /health body');
    }
    return performance.now() - start;
  } finally {
    stop?.();
  }
}

const names = Object.keys(clients);
for (const name of names) await timeCalls(name, 300); // JIT and open the keep-alive sockets
const rounds: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  const total: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
  for (let block = 0; block < CALLS / BLOCK; block += 1) {
    for (let i = 0; i < names.length; i += 1) {
      const name = names[(i + block) % names.length]!;
      total[name]! += await timeCalls(name, BLOCK);
    }
  }
  for (const name of names) rounds[name]!.push(total[name]!);
}
await tracerProvider.forceFlush();
// Spans per instrumented call: 0 means the SDK published nothing (the figure then measures nothing).
const instrumentedCalls = 300 + CALLS * ROUNDS;
console.log(JSON.stringify({ calls: CALLS, rounds, spansPerCall: exported / instrumentedCalls }));
await tracerProvider.shutdown();
