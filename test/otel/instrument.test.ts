// instrumentIntegrationSdk's life cycle: the global providers by default, stop, instrumenting
// twice, spans in flight at stop; and that only this entry loads @opentelemetry/api.
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { CHANNEL_NAMES, traceAttempt, traceCall } from '../../src/diagnostics.ts';
import { instrumentIntegrationSdk } from 'integration-sdk/otel';
import { instrumentInMemory } from './helpers.ts';

const call = () => traceCall('orders.get', async () => 'ok');
const subscribed = () => Object.values(CHANNEL_NAMES).map((name) => diagnostics.tracingChannel(name).hasSubscribers);

afterEach(() => {
  trace.disable();
  metrics.disable();
});

describe('instrumentIntegrationSdk', () => {
  it('uses the global tracer provider when none is given', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    const stop = instrumentIntegrationSdk();
    await call();
    stop();
    expect(exporter.getFinishedSpans().map((span) => [span.name, span.instrumentationScope.name])).toEqual([['orders.get', 'integration-sdk']]);
  });

  it('stops: unsubscribes from every channel, records nothing more, and a second stop is harmless', async () => {
    const telemetry = instrumentInMemory();
    expect(subscribed()).toEqual([true, true, true, true]);
    await call();
    telemetry.stop();
    telemetry.stop();
    expect(subscribed()).toEqual([false, false, false, false]);
    await call();
    expect(telemetry.spans()).toHaveLength(1);
  });

  it('instrumenting again replaces the instrumentation in place: each call is recorded once, by the newest', async () => {
    const first = instrumentInMemory();
    const second = instrumentInMemory();
    await call();
    expect(first.spans()).toHaveLength(0);
    expect(second.spans()).toHaveLength(1);
    first.stop(); // already replaced: must not stop the second one
    await call();
    expect(second.spans()).toHaveLength(2);
    second.stop();
  });

  it('ends the spans still open when it stops, so a call in flight is not lost', async () => {
    const telemetry = instrumentInMemory();
    let release!: () => void;
    const pending = traceCall('catalog.upsertProducts', () =>
      traceAttempt({ method: 'POST', route: '/catalog/products/batch', serverAddress: 'localhost:1', attempt: 1 }, () => new Promise<void>((done) => (release = done))),
    );
    await Promise.resolve();
    telemetry.stop();
    expect(telemetry.spans().map((span) => span.name).sort()).toEqual(['POST /catalog/products/batch', 'catalog.upsertProducts']);
    release();
    await pending;
    expect(telemetry.spans()).toHaveLength(2);
  });
});

describe('the optional peer', () => {
  /** Every source file src/index.ts reaches through relative imports (type-only imports included). */
  function reachable(entry: string): Map<string, string> {
    const seen = new Map<string, string>();
    const pending = [entry];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (seen.has(file)) continue;
      const text = readFileSync(file, 'utf8');
      seen.set(file, text);
      for (const match of text.matchAll(/\bfrom\s*['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]/g)) {
        pending.push(resolve(dirname(file), match[1] ?? match[2]!));
      }
    }
    return seen;
  }

  it('is imported by integration-sdk/otel and by nothing the main entry reaches', () => {
    const src = resolve(import.meta.dirname, '../../src');
    const main = reachable(resolve(src, 'index.ts'));
    expect(main.size).toBeGreaterThan(10);
    expect([...main].filter(([, text]) => text.includes('@opentelemetry')).map(([file]) => file)).toEqual([]);
    expect(readFileSync(resolve(src, 'otel/index.ts'), 'utf8')).toContain("from '@opentelemetry/api'");
  });
});
