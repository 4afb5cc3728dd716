// In-memory OpenTelemetry SDK for the otel tests: spans land in an InMemorySpanExporter, metrics
// are collected on demand from a MetricReader.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { instrumentIntegrationSdk, type InboxStatsSource } from 'integration-sdk/otel';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface Telemetry {
  spans(): ReadableSpan[];
  span(name: string): ReadableSpan;
  /** Children of `parent`, in start order. */
  children(parent: ReadableSpan): ReadableSpan[];
  metrics(): Promise<MetricData[]>;
  metric(name: string): Promise<MetricData | undefined>;
  stop(): void;
}

export function instrumentInMemory(options: { inbox?: InboxStatsSource } = {}): Telemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const stop = instrumentIntegrationSdk({ tracerProvider, meterProvider, ...options });
  const spans = () => exporter.getFinishedSpans();
  const metrics = async () => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  };
  return {
    spans,
    span(name) {
      const found = spans().filter((span) => span.name === name);
      if (found.length !== 1) throw new Error(`expected one span named ${name}, found ${found.length}: ${spans().map((s) => s.name).join(', ')}`);
      return found[0]!;
    },
    children(parent) {
      return spans()
        .filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
        .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    },
    metrics,
    async metric(name) {
      return (await metrics()).find((metric) => metric.descriptor.name === name);
    },
    stop,
  };
}

/** Every string an exported span or metric carries: names, attribute keys and values, events, status. */
export function everyRecordedString(spans: ReadableSpan[], metrics: MetricData[]): string[] {
  const strings: string[] = [];
  const add = (attributes: Record<string, unknown> | undefined) => {
    for (const [key, value] of Object.entries(attributes ?? {})) strings.push(key, JSON.stringify(value));
  };
  for (const span of spans) {
    strings.push(span.name, span.status.message ?? '');
    add(span.attributes);
    for (const event of span.events) {
      strings.push(event.name);
      add(event.attributes);
    }
    for (const link of span.links) add(link.attributes);
  }
  for (const metric of metrics) {
    strings.push(metric.descriptor.name, metric.descriptor.description);
    for (const point of metric.dataPoints as { attributes: Record<string, unknown> }[]) add(point.attributes);
  }
  return strings;
}
