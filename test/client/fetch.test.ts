import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IntegrationClient, TimeoutError, VERSION } from '../../src/index.ts';
import { API_KEY, BASE_URL, ENTRY, HEALTH, PHONE, json, makeClient, settle } from './helpers.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** A fetch that records its arguments as given and answers `reply`. */
function spyFetch(reply: () => Response | Promise<Response> = () => json(200, HEALTH)({} as never)) {
  const calls: { input: unknown; init: RequestInit | undefined }[] = [];
  const fetch = (async (input: unknown, init?: RequestInit) => {
    calls.push({ input, init });
    return reply();
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

describe('each attempt is one direct call of fetch(url, init)', () => {
  it('a GET: an absolute URL string and a plain init, no body and no Content-Type', async () => {
    const { fetch, calls } = spyFetch();
    await makeClient(fetch).health();
    expect(calls).toHaveLength(1);
    const [{ input, init }] = calls as [(typeof calls)[0]];
    expect(input).toBe(`${BASE_URL}/integration/v1/health`);
    expect(init).toMatchObject({ method: 'GET', redirect: 'manual' });
    expect(init?.body).toBeUndefined();
    expect(init?.headers).toEqual({ 'X-API-Key': API_KEY, Accept: 'application/json', 'User-Agent': expect.stringMatching(new RegExp(`^integration-sdk/${VERSION.replaceAll('.', '\\.')} node/\\d+`)) });
    expect(init?.signal).toBeInstanceOf(AbortSignal);
    expect(init?.signal?.aborted).toBe(false);
  });

  it('a body goes as a JSON string, with Content-Type', async () => {
    const { fetch, calls } = spyFetch(() => json(201, { entry: ENTRY, balance: 50 })({} as never));
    await makeClient(fetch).loyalty.credit({ phone: PHONE, points: 50, idempotency_key: 'k-1' });
    const init = calls[0]?.init;
    expect(init?.method).toBe('POST');
    expect(JSON.parse(init?.body as string)).toEqual({ phone: PHONE, points: 50, idempotency_key: 'k-1' });
    expect(init?.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-API-Key': API_KEY, Accept: 'application/json' });
  });

  it('every request gets its own headers object (a fetch may keep or change what it is given)', async () => {
    const { fetch, calls } = spyFetch();
    const client = makeClient(fetch);
    await client.health();
    (calls[0]!.init!.headers as Record<string, string>)['X-API-Key'] = 'changed';
    await client.health();
    expect(calls[1]!.init!.headers).not.toBe(calls[0]!.init!.headers);
    expect((calls[1]!.init!.headers as Record<string, string>)['X-API-Key']).toBe(API_KEY);
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
    const fetch = ((_input: unknown, init?: RequestInit) => {
      seen = init?.signal ?? undefined;
      return new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
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
    const fetch = ((_input: unknown, init?: RequestInit) => {
      seen = init?.signal ?? undefined;
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
