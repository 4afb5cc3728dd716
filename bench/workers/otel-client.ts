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
import { BENCH_API_KEY, interleavedRounds, rawHealth, timeHealthCalls } from '../lib/health-rounds.ts';

const [url = '', callsArg = '2000', roundsArg = '3', blockArg = '100'] = process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);
const BLOCK = Number(blockArg);
const API_KEY = BENCH_API_KEY;

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
  raw: rawHealth(url),
  sdk: () => sdk.health(),
  sdk_otel: () => sdk.health(),
};

async function timeCalls(name: string, calls: number): Promise<number> {
  const stop = name === 'sdk_otel' ? instrumentIntegrationSdk({ tracerProvider, meterProvider }) : undefined;
  try {
    return await timeHealthCalls(clients[name]!, calls);
  } finally {
    stop?.();
  }
}

const rounds = await interleavedRounds(Object.keys(clients), timeCalls, { calls: CALLS, rounds: ROUNDS, block: BLOCK });
await tracerProvider.forceFlush();
// Spans per instrumented call: 0 means the SDK published nothing (the figure then measures nothing).
const instrumentedCalls = 300 + CALLS * ROUNDS;
console.log(JSON.stringify({ calls: CALLS, rounds, spansPerCall: exported / instrumentedCalls }));
await tracerProvider.shutdown();
