// The rules the dashboard's banner and `doctor --store` share (src/inbox/health.ts), on an injected "now".
import { describe, expect, it } from 'vitest';
import { inboxAttention, noWorkerRunning } from '../../src/inbox/health.ts';
import type { InboxStats } from '../../src/inbox/store.ts';

const NOW = 1_800_000_000_000;
const MINUTE = 60_000;
const stats = (overrides: Partial<InboxStats> = {}): InboxStats => ({ received: 0, pending: 0, processing: 0, done: 0, dead: 0, oldestPendingAgeMs: 0, invalidPayload: 0, ...overrides });

describe('noWorkerRunning', () => {
  it('is work waiting over a minute with no worker claim in the last minute', () => {
    const waiting = stats({ pending: 3, processing: 1, oldestPendingAgeMs: 4 * MINUTE });
    expect(noWorkerRunning(waiting, [], NOW)).toEqual({ waiting: 4, oldestPendingAgeMs: 4 * MINUTE, lastClaimAt: null });
    expect(noWorkerRunning(waiting, [{ seenAt: NOW - 2 * MINUTE }, { seenAt: NOW - 5 * MINUTE }], NOW)).toEqual({ waiting: 4, oldestPendingAgeMs: 4 * MINUTE, lastClaimAt: NOW - 2 * MINUTE });
  });

  it('is not when a worker claimed in the last minute, when the work is younger than a minute, or when nothing waits', () => {
    expect(noWorkerRunning(stats({ pending: 4, oldestPendingAgeMs: 4 * MINUTE }), [{ seenAt: NOW - 59_000 }], NOW)).toBeUndefined();
    expect(noWorkerRunning(stats({ pending: 4, oldestPendingAgeMs: 59_000 }), [], NOW)).toBeUndefined();
    expect(noWorkerRunning(stats({ dead: 2 }), [], NOW)).toBeUndefined();
  });
});

describe('inboxAttention', () => {
  const missed = [{ deliveryId: 'd-1', event: 'order.created', status: 'dead', endpointId: 'w-1', lastError: null, createdAt: '2027-01-15T08:00:00.000Z', attemptCount: 6, givesUpAt: null }];

  it('lists failures first (no worker, open misses), then warnings (dead entries)', () => {
    const items = inboxAttention({ stats: stats({ pending: 2, dead: 1, oldestPendingAgeMs: 20 * MINUTE }), workers: [], missed, now: NOW });
    expect(items.map((item) => [item.kind, item.severity])).toEqual([['no-worker', 'fail'], ['missed', 'fail'], ['dead', 'warn']]);
  });

  it('says pending work is old only while a worker runs, and judges no worker only for a store that keeps heartbeats', () => {
    const old = stats({ pending: 2, oldestPendingAgeMs: 20 * MINUTE });
    expect(inboxAttention({ stats: old, workers: [{ seenAt: NOW - 10_000 }], missed: [], now: NOW })).toEqual([{ kind: 'pending-old', severity: 'warn', oldestPendingAgeMs: 20 * MINUTE }]);
    expect(inboxAttention({ stats: old, workers: undefined, missed: undefined, now: NOW }).map((item) => item.kind)).toEqual(['pending-old']);
    expect(inboxAttention({ stats: stats(), workers: [], missed: [], now: NOW })).toEqual([]);
  });
});
