/**
 * A `webhooks.create` ended by its caller (docs/webhook-endpoints.md): aborted by its `signal`, or
 * out of its `totalTimeoutMs`. The clean-up of a create that may have registered its endpoint stays
 * within both, and what it had no time to look for is left to the client's late watch: its next
 * `create` deletes an endpoint the service registered after all. (Failures the service answers,
 * and time-outs within the deadline, are in retry-modes.test.ts.)
 */
import { describe, expect, test } from 'vitest';
import { TimeoutError, type RateLimiter } from 'integration-sdk';
import type { Sandbox } from 'integration-sdk/sandbox';
import { clientFor, ManualClock, rejectionOf, startSandbox } from './helpers.ts';

/**
 * A service slow to register: the first POST /webhooks is held (its answer never reaches the
 * client) until `register()` hands it to the sandbox, as a service still at work after the client
 * gave up. `methods` lists every request the client made; `answered(method, n)` is called as the
 * n-th request (1-based) is answered.
 */
function heldCreate(answered: (method: string, n: number) => void = () => {}) {
  const methods: string[] = [];
  let held: Request | undefined;
  let onPosted!: () => void;
  const posted = new Promise<void>((resolve) => (onPosted = resolve));
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    methods.push(request.method);
    const n = methods.length;
    if (request.method === 'POST' && held === undefined) {
      // Cloned without the signal: the client's abort does not stop the service's work.
      held = new Request(request.url, { method: 'POST', headers: request.headers, body: await request.text() });
      onPosted();
      return new Promise<Response>((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)));
    }
    const response = await globalThis.fetch(request);
    answered(request.method, n);
    return response;
  };
  return { fetch, posted, methods, register: () => globalThis.fetch(held!) };
}

const input = { url: 'http://127.0.0.1:9/hooks', events: ['order.created' as const] };

/** The endpoints the sandbox holds, as a client that took no part sees them. */
async function endpointIds(sandbox: Sandbox): Promise<string[]> {
  return (await clientFor(sandbox).client.webhooks.list()).map((endpoint) => endpoint.id);
}

describe('a create aborted by the caller', () => {
  test('after its request left: rejects with the signal’s reason at once, and the endpoint the service registers later is deleted by the client’s next create', async () => {
    const sandbox = await startSandbox();
    const held = heldCreate();
    const { client } = clientFor(sandbox, { maxRetries: 0, fetch: held.fetch });
    const controller = new AbortController();
    const creating = rejectionOf(client.webhooks.create(input, { signal: controller.signal }));
    await held.posted;
    controller.abort();
    expect(await creating).toBe(controller.signal.reason);
    expect(held.methods).toEqual(['GET', 'POST']); // nothing run past the caller's abort

    await held.register();
    const [late] = await endpointIds(sandbox);
    expect(late).toBeDefined(); // the service did register it, after the caller aborted

    const again = await client.webhooks.create(input);
    expect(await endpointIds(sandbox)).toEqual([again.id]);
  });

  test('while still queued behind the rate limiter (never sent): nothing is remembered, and another process’s endpoint is kept', async () => {
    const sandbox = await startSandbox();
    let onQueued!: () => void;
    const queued = new Promise<void>((resolve) => (onQueued = resolve));
    // Lets every GET through, and holds the POST until the call's signal aborts.
    const limiter: RateLimiter = {
      honoursBudget: true,
      pause() {},
      acquire(signal, _budget, request) {
        if (request?.method !== 'POST') return Promise.resolve();
        onQueued();
        return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
      },
    };
    const { client } = clientFor(sandbox, { rateLimit: limiter });
    const controller = new AbortController();
    const creating = rejectionOf(client.webhooks.create(input, { signal: controller.signal }));
    await queued;
    controller.abort();
    expect(await creating).toBe(controller.signal.reason);

    const other = await clientFor(sandbox).client.webhooks.create(input); // same URL and events, registered elsewhere
    expect((await client.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([other.id]);
    expect(await endpointIds(sandbox)).toEqual([other.id]);
  });
});

describe('the clean-up after a failed create stays within the call’s totalTimeoutMs', () => {
  test.each([
    {
      name: 'spent by the request itself: no look at all',
      options: { timeoutMs: 5_000, totalTimeoutMs: 200 },
      timesOutAfterMs: 200,
      requests: ['GET', 'POST'],
      note: /the call's totalTimeoutMs left no time to look for an endpoint the service may still register: this client's next webhooks.create or webhooks.list within 10 minutes deletes it/,
    },
    {
      name: 'too little left to wait for the second look: one look',
      options: { timeoutMs: 600, totalTimeoutMs: 1_000 },
      timesOutAfterMs: 600,
      requests: ['GET', 'POST', 'GET'],
      note: /no endpoint with this URL and events was found to delete, looked for once \(the call's totalTimeoutMs left no time to look again\), but the service may still register one: this client's next webhooks.create/,
    },
  ])('$name; the client’s next create deletes the late endpoint', async ({ options, timesOutAfterMs, requests, note }) => {
    const sandbox = await startSandbox();
    const held = heldCreate();
    const clock = new ManualClock();
    const { client } = clientFor(sandbox, { maxRetries: 0, fetch: held.fetch, clock });
    const startedAt = clock.now();
    const creating = rejectionOf(client.webhooks.create(input, options));
    await held.posted;
    clock.advance(timesOutAfterMs);
    const error = await creating;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(note);
    expect(held.methods).toEqual(requests);
    expect(clock.now() - startedAt).toBeLessThanOrEqual(options.totalTimeoutMs);
    expect(clock.pendingTimers).toBe(0); // no wait left behind

    await held.register();
    const again = await client.webhooks.create(input);
    expect(await endpointIds(sandbox)).toEqual([again.id]);
  });

  test('the caller’s abort during the clean-up ends it: the create’s own error is thrown, and the late endpoint is deleted next time', async () => {
    const sandbox = await startSandbox();
    const controller = new AbortController();
    // The clean-up's first look (the third request) is answered, then the caller gives up.
    const held = heldCreate((_method, n) => n === 3 && controller.abort());
    const clock = new ManualClock();
    const { client } = clientFor(sandbox, { maxRetries: 0, fetch: held.fetch, clock });
    const creating = rejectionOf(client.webhooks.create(input, { timeoutMs: 300, signal: controller.signal }));
    await held.posted;
    clock.advance(300);
    const error = await creating;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toMatch(/the clean-up was cut short by the call's signal or totalTimeoutMs, so one with this URL and events may exist or still appear: this client's next webhooks.create/);
    expect(held.methods).toEqual(['GET', 'POST', 'GET']);
    expect(clock.pendingTimers).toBe(0);

    await held.register();
    const again = await client.webhooks.create(input);
    expect(await endpointIds(sandbox)).toEqual([again.id]);
  });
});
