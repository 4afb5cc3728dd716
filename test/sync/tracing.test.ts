// A sync run is one span with its counts; its health() and its batch writes are its children, and
// unchanged items cost no span.
import { afterAll, afterEach, expect, it } from 'vitest';
import { createSync } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { clientFor, onCleanup, startSandbox } from '../e2e/helpers.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { instrumentInMemory, type Telemetry } from '../otel/helpers.ts';

let telemetry: Telemetry;
afterEach(() => telemetry.stop());
const dir = tempDir('sync-tracing');
afterAll(() => dir.remove());

const products = (count: number, price = 1) => Array.from({ length: count }, (_, i) => ({ external_id: `TRACE-${i}`, name: `P ${i}`, price }));

it('traces sync.catalog as one span with its counts, the writes of changed items only under it', async () => {
  telemetry = instrumentInMemory();
  const sandbox = await startSandbox();
  const { client } = clientFor(sandbox);
  const sync = createSync({ client, state: sqliteSyncState({ path: `${dir.path}/state.db` }) });
  onCleanup(() => sync.close());
  await sync.catalog(products(30), { batchSize: 10 });
  const first = telemetry.span('sync.catalog');
  expect(first.attributes).toMatchObject({ 'integration_sdk.operation': 'sync.catalog', 'integration_sdk.batches': 3 });
  expect(telemetry.children(first).map((span) => span.name)).toEqual(['health', 'catalog.upsertProducts', 'catalog.upsertProducts', 'catalog.upsertProducts']);
  const counted = Object.entries(first.attributes).filter(([name]) => name.startsWith('integration_sdk.result.'));
  expect(Object.fromEntries(counted)).toMatchObject({ 'integration_sdk.result.total': 30, 'integration_sdk.result.sent': 30, 'integration_sdk.result.created': 30, 'integration_sdk.result.unchanged': 0 });

  const before = telemetry.spans().length;
  const edited = products(30);
  edited[4]!.price = 2;
  await sync.catalog(edited, { batchSize: 10 });
  const added = telemetry.spans().slice(before);
  // The run, its health() (and its GET attempt), one write of one item (its batch and attempt): nothing for the 29 unchanged.
  expect(added.filter((span) => span.name === 'sync.catalog')).toHaveLength(1);
  expect(added.filter((span) => span.name === 'catalog.upsertProducts')).toHaveLength(1);
  expect(added.filter((span) => span.name === 'catalog.upsertProducts batch')).toHaveLength(1);
  const second = added.find((span) => span.name === 'sync.catalog')!;
  expect(second.attributes).toMatchObject({ 'integration_sdk.result.unchanged': 29, 'integration_sdk.result.sent': 1, 'integration_sdk.result.updated': 1, 'integration_sdk.batches': 1 });
});
