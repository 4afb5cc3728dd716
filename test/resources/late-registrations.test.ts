// Which endpoints a client takes for the late registration of its own failed webhooks.create
// (issue 26 item 19); the deletions themselves run against the sandbox in test/e2e/retry-modes.
import { describe, expect, it } from 'vitest';
import type { WebhookEndpoint } from '../../src/index.ts';
import { LATE_REGISTRATION_WATCH_MS, LateRegistrations } from '../../src/resources/late-registrations.ts';
import { ManualClock } from '../support/manual-clock.ts';

const shape = { url: 'https://erp.example.com/hooks', events: ['order.created', 'order.status_changed'] };

function endpoint(id: string, overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return { id, url: shape.url, events: [...shape.events], consecutive_failures: 0, created_at: '2026-11-21T12:00:00.000Z', ...overrides };
}

function watching(before: string[] = []) {
  const clock = new ManualClock();
  const late = new LateRegistrations(clock);
  late.expect(shape, new Set(before));
  return { clock, late };
}

describe('what a failed create’s late registration is taken to be', () => {
  it('an endpoint of the same URL and events (in any order) that was not there before: one per failed create', () => {
    const { late } = watching(['there-before']);
    const listed = [
      endpoint('there-before'),
      endpoint('other-url', { url: 'https://erp.example.com/other' }),
      endpoint('fewer-events', { events: ['order.created'] }),
      endpoint('late', { events: ['order.status_changed', 'order.created', 'order.created'] }),
      endpoint('second-like-it'),
    ];
    expect(late.claim(listed).map((claim) => claim.endpoint.id)).toEqual(['late']);
    expect(late.claim(listed)).toEqual([]); // settled
  });

  it('two failed creates of one shape: two endpoints', () => {
    const { late } = watching();
    late.expect(shape, new Set());
    expect(late.claim([endpoint('a'), endpoint('b'), endpoint('c')]).map((claim) => claim.endpoint.id)).toEqual(['a', 'b']);
  });

  it('never one whose secret this client received', () => {
    const { late } = watching();
    late.received('mine');
    expect(late.claim([endpoint('mine'), endpoint('late')]).map((claim) => claim.endpoint.id)).toEqual(['late']);
  });

  it('nothing while a create of the same shape is under way (its secret may be on its way), again once it has settled', () => {
    const { late } = watching();
    const settled = late.sending({ ...shape, events: [...shape.events].reverse() });
    const other = late.sending({ ...shape, url: 'https://erp.example.com/other' });
    expect(late.claim([endpoint('late')])).toEqual([]);
    settled();
    settled(); // twice is once
    other();
    expect(late.claim([endpoint('late')]).map((claim) => claim.endpoint.id)).toEqual(['late']);
  });

  it('a claim released (its deletion failed) is looked for again', () => {
    const { late } = watching();
    const [claim] = late.claim([endpoint('late')]);
    claim!.release();
    expect(late.claim([endpoint('late')]).map((c) => c.endpoint.id)).toEqual(['late']);
  });

  it('forgotten after the watch: an endpoint registered later is someone else’s', () => {
    const { clock, late } = watching();
    clock.advance(LATE_REGISTRATION_WATCH_MS - 1);
    late.expect(shape, new Set()); // a second failed create, later
    clock.advance(1);
    expect(late.claim([endpoint('a'), endpoint('b')]).map((claim) => claim.endpoint.id)).toEqual(['a']);
    clock.advance(LATE_REGISTRATION_WATCH_MS);
    expect(late.claim([endpoint('b')])).toEqual([]);
  });
});
