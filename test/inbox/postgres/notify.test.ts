import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InboxStore } from 'integration-sdk/inbox';
import { postgresStore } from 'integration-sdk/inbox/postgres';
import { usePostgres } from '../support/postgres.ts';

const postgres = usePostgres();
const opened: InboxStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

function open(schema: string): InboxStore {
  const store = postgresStore({ connectionString: postgres.current.url, schema });
  opened.push(store);
  return store;
}

const entry = (i: number) => ({ deliveryId: `d-${i}`, event: 'webhook.test', orderId: null, ts: 1_800_000_000, payload: '{}', known: true, receivedAt: 1 });

describe('postgresStore LISTEN/NOTIFY', () => {
  it('wakes a listener in another pool after a burst of inserts, with a notification sent after the last one committed', async () => {
    const schema = `notify_${process.pid}`;
    const receiver = open(schema);
    const worker = open(schema);
    await receiver.migrate();
    // What the listener can see when each notification arrives: the burst's last entry must be
    // visible to at least one of them, or a worker would sleep until its next poll.
    const seenAtWake: number[] = [];
    const unsubscribe = await worker.subscribe!(() => {
      // A late notification may arrive after the test closed the store.
      worker.stats(Date.now()).then((stats) => seenAtWake.push(stats.pending), () => {});
    });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => receiver.insert(entry(i))));
    expect(results).toEqual(Array(20).fill('stored'));
    await vi.waitFor(() => expect(seenAtWake).toContain(20), { timeout: 10_000, interval: 20 });
    // Coalesced: fewer notifications than inserts, never none.
    expect(seenAtWake.length).toBeGreaterThan(0);
    unsubscribe();
  });

  it('sends no notification for a duplicate delivery', async () => {
    const schema = `notify_dup_${process.pid}`;
    const receiver = open(schema);
    const worker = open(schema);
    await receiver.migrate();
    let wakes = 0;
    const unsubscribe = await worker.subscribe!(() => void (wakes += 1));
    expect(await receiver.insert(entry(1))).toBe('stored');
    await vi.waitFor(() => expect(wakes).toBe(1), { timeout: 10_000, interval: 20 });
    expect(await receiver.insert(entry(1))).toBe('duplicate');
    // A stored entry after the duplicate: its notification is the only one that may arrive.
    expect(await receiver.insert(entry(2))).toBe('stored');
    await vi.waitFor(() => expect(wakes).toBeGreaterThan(1), { timeout: 10_000, interval: 20 });
    expect(wakes).toBe(2);
    unsubscribe();
  });

  it('closes right after an insert, without waiting for a wake-up still queued for a connection', async () => {
    for (let i = 0; i < 5; i += 1) {
      const store = postgresStore({ connectionString: postgres.current.url, schema: 'notify_close' });
      await store.migrate();
      await store.insert(entry(100 + i));
      // Before the fix this never resolved: pg-pool serves no waiter once end() began.
      await store.close();
    }
    const check = open('notify_close');
    expect((await check.stats(1)).received).toBe(5);
  });
});
