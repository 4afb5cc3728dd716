import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, InvalidInputError } from 'integration-sdk';
import { createInbox, type InboxOptions, type StartWorkerOptions } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { SECRET, sqliteInbox } from './support/inbox-fixture.ts';
import { tempDir } from './support/temp-dir.ts';

// Every mistake in the options is refused at once with a typed error, never a raw TypeError later
// (on the first delivery, or in the worker's loop where only onError would see it).

const disposers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const dispose of disposers.splice(0).reverse()) await dispose();
});

function open(options: Partial<InboxOptions> = {}) {
  const fixture = sqliteInbox(options);
  disposers.push(() => fixture.dispose());
  return fixture.inbox;
}

describe('createInbox options', () => {
  it('refuses a missing store or secret with a ConfigurationError', () => {
    const dir = tempDir('inbox-options');
    disposers.push(() => dir.remove());
    const store = sqliteStore({ path: `${dir.path}/inbox.db` });
    expect(() => createInbox(undefined as unknown as InboxOptions)).toThrow(ConfigurationError);
    expect(() => createInbox({ secret: SECRET } as InboxOptions)).toThrow(ConfigurationError);
    expect(() => createInbox({ store } as InboxOptions)).toThrow(ConfigurationError);
    expect(() => createInbox({ store, secret: [] })).toThrow(ConfigurationError);
    expect(() => createInbox({ store, secret: ['whsec_a', ''] })).toThrow(ConfigurationError);
  });

  it.each([
    ['toleranceSeconds', { toleranceSeconds: -1 }],
    ['toleranceSeconds', { toleranceSeconds: Number.NaN }],
    ['toleranceSeconds', { toleranceSeconds: '300' as unknown as number }],
    ['storeTimeoutMs', { storeTimeoutMs: 0 }],
    ['storeTimeoutMs', { storeTimeoutMs: Number.NaN }],
    ['retention.days', { retention: { days: -1 } }],
    ['retention.days', { retention: { days: '7' as unknown as number } }],
    ['retention', { retention: 7 as unknown as { days: number } }],
    ['onError', { onError: 'log' as unknown as () => void }],
  ])('refuses a wrong %s at once: %o', (_name, options) => {
    const dir = tempDir('inbox-options');
    disposers.push(() => dir.remove());
    expect(() => createInbox({ secret: SECRET, store: sqliteStore({ path: `${dir.path}/inbox.db` }), ...options })).toThrow(ConfigurationError);
  });
});

describe('inbox methods refuse wrong arguments with InvalidInputError', () => {
  it('entries() with an unknown status, or a filter that is not an object', async () => {
    const inbox = open();
    const drain = async (filter: unknown) => {
      for await (const _ of inbox.entries(filter as { status?: 'dead' })) void _;
    };
    await expect(drain({ status: 'failed' })).rejects.toThrow(InvalidInputError);
    await expect(drain(null)).rejects.toThrow(InvalidInputError);
    await expect(drain(undefined)).resolves.toBeUndefined();
    await expect(drain({})).resolves.toBeUndefined();
  });

  it('purge() without options, or with a wrong status or age', async () => {
    const inbox = open();
    await expect(inbox.purge(null as never)).rejects.toThrow(InvalidInputError);
    await expect(inbox.purge(undefined as never)).rejects.toThrow(InvalidInputError);
    await expect(inbox.purge({ status: 'pending' as never })).rejects.toThrow(InvalidInputError);
    await expect(inbox.purge({ status: 'dead', olderThanDays: -1 })).rejects.toThrow(InvalidInputError);
    expect(await inbox.purge({ status: 'dead', olderThanDays: 30 })).toBe(0);
  });

  it('retry() without a delivery id', async () => {
    const inbox = open();
    await expect(inbox.retry('' as string)).rejects.toThrow(InvalidInputError);
    await expect(inbox.retry(undefined as unknown as string)).rejects.toThrow(InvalidInputError);
    expect(await inbox.retry('00000000-0000-4000-8000-000000000000')).toBe(false);
  });
});

describe('inbox.startWorker options', () => {
  const handlers = { 'order.created': async () => {} };

  it.each<[string, Partial<StartWorkerOptions>]>([
    ['a handler that is not a function', { handlers: { 'order.created': 'saveOrder' as never } }],
    ['handlers that are not an object', { handlers: (async () => {}) as never }],
    ['concurrency 0', { handlers, concurrency: 0 }],
    ['concurrency 1.5', { handlers, concurrency: 1.5 }],
    ['concurrency as a string', { handlers, concurrency: '4' as unknown as number }],
    ['maxAttempts 2.5', { handlers, maxAttempts: 2.5 }],
    ['maxAttempts Infinity', { handlers, maxAttempts: Number.POSITIVE_INFINITY }],
    ['leaseMs 0', { handlers, leaseMs: 0 }],
    ['orderWaitMs -1', { handlers, orderWaitMs: -1 }],
    ['retryDelayMs not a function', { handlers, retryDelayMs: 1000 as never }],
    ['onError not a function', { handlers, onError: console as never }],
    ['client without orders.get', { handlers, client: {} as never }],
  ])('refuses %s with a ConfigurationError, starting nothing', (_name, options) => {
    const inbox = open();
    expect(() => inbox.startWorker(options as StartWorkerOptions)).toThrow(ConfigurationError);
  });

  it('refuses no options at all', () => {
    const inbox = open();
    expect(() => inbox.startWorker(undefined as unknown as StartWorkerOptions)).toThrow(ConfigurationError);
  });

  it('accepts an empty handlers object: every event is then simply marked done', async () => {
    const inbox = open();
    const worker = inbox.startWorker({ handlers: {} });
    await worker.stop({ graceMs: 0 });
  });

  it('refuses to start a worker on a closed inbox', async () => {
    const inbox = open();
    await inbox.close();
    expect(() => inbox.startWorker({ handlers })).toThrow(ConfigurationError);
  });
});
