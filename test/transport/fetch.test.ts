import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntegrationClient, TimeoutError, VERSION } from '../../src/index.ts';
import { API_KEY, BASE_URL, ENTRY, HEALTH, PHONE, json, makeClient, settle } from '../support/fake-service.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** A fetch that records the Request it was given (ky hands fetch one `Request`) and answers `reply`. */
function spyFetch(reply: () => Response | Promise<Response> = () => json(200, HEALTH)({} as never)) {
  const calls: Request[] = [];
  const fetch = (async (input: unknown) => {
    calls.push(input as Request);
    return reply();
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

/** The signal a fetch was handed, from its Request. */
const signalOf = (input: unknown): AbortSignal => (input as Request).signal;

describe('each attempt is one call of the user’s fetch, through ky', () => {
  it('a GET: the prefixed URL, no body and no Content-Type, manual redirects', async () => {
    const { fetch, calls } = spyFetch();
    await makeClient(fetch).health();
    expect(calls).toHaveLength(1);
    const [request] = calls as [Request];
    expect(request).toBeInstanceOf(Request);
    expect(request.url).toBe(`${BASE_URL}/integration/v1/health`);
    expect(request.method).toBe('GET');
    expect(request.redirect).toBe('manual');
    expect(request.body).toBeNull();
    expect(request.headers.get('content-type')).toBeNull();
    expect(request.headers.get('x-api-key')).toBe(API_KEY);
    expect(request.headers.get('accept')).toBe('application/json');
    expect(request.headers.get('user-agent')).toMatch(new RegExp(`^integration-sdk/${VERSION.replaceAll('.', '\\.')} node/\\d+`));
    expect(request.signal.aborted).toBe(false);
  });

  it('a body goes as a JSON string, with Content-Type', async () => {
    let sent: unknown;
    const { fetch, calls } = spyFetch(() => json(201, { entry: ENTRY, balance: 50 })({} as never));
    const reading = (async (input: Request) => {
      sent = await input.clone().json();
      return fetch(input);
    }) as typeof globalThis.fetch;
    await makeClient(reading).loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'k-1' });
    const request = calls[0]!;
    expect(request.method).toBe('POST');
    expect(sent).toEqual({ phone: PHONE, points: 50, idempotency_key: 'k-1' });
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(request.headers.get('x-api-key')).toBe(API_KEY);
  });

  it('every request gets its own headers (a fetch may keep or change what it is given)', async () => {
    const { fetch, calls } = spyFetch();
    const client = makeClient(fetch);
    await client.health();
    calls[0]!.headers.set('X-API-Key', 'changed');
    await client.health();
    expect(calls[1]!.headers.get('x-api-key')).toBe(API_KEY);
  });

  it('without a fetch option, globalThis.fetch is looked up at each request, not when the client is built', async () => {
    const client = new IntegrationClient({ apiKey: API_KEY, baseUrl: BASE_URL, rateLimit: false });
    const first = spyFetch();
    vi.stubGlobal('fetch', first.fetch);
    await expect(client.health()).resolves.toEqual(HEALTH);
    const second = spyFetch();
    vi.stubGlobal('fetch', second.fetch);
    await client.health();
    expect([first.calls.length, second.calls.length]).toEqual([1, 1]);
  });
});

describe('the attempt signal', () => {
  it('aborts with the reason of the caller’s signal', async () => {
    let seen: AbortSignal | undefined;
    const fetch = ((input: unknown) => {
      seen = signalOf(input);
      return new Promise<Response>((_resolve, reject) => seen!.addEventListener('abort', () => reject(seen!.reason)));
    }) as typeof globalThis.fetch;
    const controller = new AbortController();
    const outcome = settle(makeClient(fetch).health({ signal: controller.signal }));
    await Promise.resolve();
    const reason = new Error('stop');
    controller.abort(reason);
    expect((await outcome).error).toBe(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
  });

  it('leaves no listener on the caller’s signal once a call is done', async () => {
    const { fetch } = spyFetch();
    const client = makeClient(fetch);
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) await client.health({ signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('aborts on the attempt deadline', async () => {
    vi.useFakeTimers({ now: 0 });
    let seen: AbortSignal | undefined;
    const fetch = ((input: unknown) => {
      seen = signalOf(input);
      return new Promise<Response>(() => {});
    }) as typeof globalThis.fetch;
    const outcome = settle(makeClient(fetch, { timeoutMs: 1000, maxRetries: 0 }).health());
    await vi.advanceTimersByTimeAsync(1000);
    expect((await outcome).error).toBeInstanceOf(TimeoutError);
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as DOMException).name).toBe('TimeoutError');
  });

  it('an answer that comes after the deadline (a fetch ignoring the signal) has its body cancelled', async () => {
    vi.useFakeTimers({ now: 0 });
    let cancelled = false;
    const fetch = (() =>
      new Promise<Response>((resolve) =>
        setTimeout(() => resolve(new Response(new ReadableStream({ cancel: () => void (cancelled = true) }), { status: 200 })), 2000),
      )) as typeof globalThis.fetch;
    const outcome = settle(makeClient(fetch, { timeoutMs: 1000, maxRetries: 0 }).health());
    await vi.advanceTimersByTimeAsync(1000);
    expect((await outcome).error).toBeInstanceOf(TimeoutError);
    expect(cancelled).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(cancelled).toBe(true);
  });
});
