// What an adversarial review broke in the transport (issue 14): each test failed before its fix.
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, IntegrationClient, InvalidInputError, RateLimitError, ResponseValidationError } from '../../src/index.ts';
import { API_KEY, HEALTH, ORDER, SECRET_PART, envelope, fakeService, json, makeClient, settle } from '../support/fake-service.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-24T12:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('paths never leave /integration/v1 (14.3)', () => {
  const escapes: [string, (client: ReturnType<typeof makeClient>) => Promise<unknown>][] = [
    ["orders.get('..')", (c) => c.orders.get('..')],
    ["orders.get('.')", (c) => c.orders.get('.')],
    ["webhooks.test('..')", (c) => c.webhooks.test('..')],
    ["webhooks.delete('.')", (c) => c.webhooks.delete('.')],
    ["request('/../../admin')", (c) => c.request({ method: 'GET', path: '/../../admin' })],
    ["request('/%2e%2e/%2E%2E/admin')", (c) => c.request({ method: 'GET', path: '/%2e%2e/%2E%2E/admin' })],
    ["request('/orders/.%2E')", (c) => c.request({ method: 'GET', path: '/orders/.%2E' })],
    ["request('/orders/./x')", (c) => c.request({ method: 'GET', path: '/orders/./x' })],
    ["request('/orders//x')", (c) => c.request({ method: 'GET', path: '/orders//x' })],
    ["request('/integration/v1/../admin')", (c) => c.request({ method: 'GET', path: '/integration/v1/../admin' })],
    ["request('/health\\\\..\\\\admin')", (c) => c.request({ method: 'GET', path: '/health\\..\\admin' })],
    // A proxy or server that decodes %2F / %5C (or once more, or NFKC) before resolving would see `..`.
    ["request('/..%2f..')", (c) => c.request({ method: 'GET', path: '/..%2f..' })],
    ["request('/orders/..%2F..%2Fadmin')", (c) => c.request({ method: 'GET', path: '/orders/..%2F..%2Fadmin' })],
    ["request('/orders/x/..%5c..')", (c) => c.request({ method: 'GET', path: '/orders/x/..%5c..' })],
    ["request('/%252e%252e/admin')", (c) => c.request({ method: 'GET', path: '/%252e%252e/admin' })],
    ["request('/..;/admin')", (c) => c.request({ method: 'GET', path: '/..;/admin' })],
    ["request('/\uFF0E\uFF0E/admin')", (c) => c.request({ method: 'GET', path: '/\uFF0E\uFF0E/admin' })],
    ["request('/%c0%ae%c0%ae/admin') (malformed UTF-8)", (c) => c.request({ method: 'GET', path: '/%c0%ae%c0%ae/admin' })],
    // The URL parser drops tabs and line breaks: `.\t.` would become `..` after the check.
    ["request('/orders/x/.\\t.')", (c) => c.request({ method: 'GET', path: '/orders/x/.\t.' })],
    ["request('/orders/x/..\\n')", (c) => c.request({ method: 'GET', path: '/orders/x/..\n' })],
    ["request('/orders/%09..')", (c) => c.request({ method: 'GET', path: '/orders/%09..' })],
    ["request('/orders/x%00/')", (c) => c.request({ method: 'GET', path: '/orders/x%00' })],
    ["orders.get('%2e%2E')", (c) => c.orders.get('%2e%2E')],
    ["webhooks.delete('%252e%252e')", (c) => c.webhooks.delete('%252e%252e')],
  ];
  it.each(escapes)('%s is InvalidInputError, nothing sent', async (_name, call) => {
    const service = fakeService(json(200, {}));
    const error = await call(makeClient(service.fetch)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(service.requests).toHaveLength(0);
  });

  it('an id containing dots among other characters, or a slash, stays one segment', async () => {
    const service = fakeService(json(200, ORDER));
    await makeClient(service.fetch).orders.get('a..b/..');
    expect(service.requests[0]!.url.pathname).toBe('/integration/v1/orders/a..b%2F..');
  });
});

describe('a lone UTF-16 surrogate in an id (19.15): InvalidInputError naming the argument, nothing sent', () => {
  // Half of an emoji: encodeURIComponent throws a bare URIError on it, and a URL's query silently sends U+FFFD instead.
  const calls: [string, string, (client: ReturnType<typeof makeClient>) => Promise<unknown>][] = [
    ["orders.get('\\uD800')", 'orderId', (c) => c.orders.get('\uD800')],
    ["orders.get('a\\uDC00')", 'orderId', (c) => c.orders.get('a\uDC00')],
    ["orders.findByExternalId('MKT-\\uD83D')", 'externalOrderId', (c) => c.orders.findByExternalId('MKT-\uD83D')],
    ["webhooks.delete('\\uD800')", 'webhookId', (c) => c.webhooks.delete('\uD800')],
    ["webhooks.test('\\uD800')", 'webhookId', (c) => c.webhooks.test('\uD800')],
    ["webhooks.deliveries('\\uD800')", 'webhookId', (c) => c.webhooks.deliveries('\uD800')],
    ["loyalty.balance({ external_id: '\\uDFFF' })", 'external_id', (c) => c.loyalty.balance({ external_id: '\uDFFF' })],
    ["loyalty.statement({ phone: '\\uD800' })", 'phone', (c) => c.loyalty.statement({ phone: '\uD800' })],
    ["request({ path: '/orders/\\uD800' })", 'path', (c) => c.request({ method: 'GET', path: '/orders/\uD800' })],
    ["request({ query: { q: '\\uD800' } })", 'query.q', (c) => c.request({ method: 'GET', path: '/orders', query: { q: '\uD800' } })],
  ];
  it.each(calls)('%s', async (_name, path, call) => {
    const service = fakeService(json(200, ORDER));
    const error = await call(makeClient(service.fetch)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).issues).toEqual([{ path, message: expect.stringContaining('lone UTF-16 surrogate') }]);
    expect(service.requests).toHaveLength(0);
  });

  it('a whole emoji (a surrogate pair) is an ordinary id', async () => {
    const service = fakeService(json(200, ORDER));
    await makeClient(service.fetch).orders.get('pedido-\u{1F600}');
    expect(service.requests[0]!.url.pathname).toBe('/integration/v1/orders/pedido-%F0%9F%98%80');
  });
});

describe('request() query values (14.9)', () => {
  it.each([
    ['an object', { a: 1 }],
    ['an array', ['x']],
    ['a function', () => 'x'],
    ['a symbol', Symbol('x')],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('%s is InvalidInputError, not String()', async (_name, value) => {
    const service = fakeService(json(200, {}));
    const error = await makeClient(service.fetch)
      .request({ method: 'GET', path: '/loyalty/program', query: { weird: value as never } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).issues.map((issue) => issue.path)).toEqual(['query.weird']);
    expect(service.requests).toHaveLength(0);
  });
});

describe('a call whose deadline ends before the client’s 429 pause (14.4)', () => {
  it('throws RateLimitError at once, with the pause left', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '30' }), json(200, HEALTH));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await settle(client.health());
    const started = Date.now();
    const outcome = settle(client.health({ totalTimeoutMs: 2000 }));
    await vi.advanceTimersByTimeAsync(0);
    const { error } = await outcome;
    expect(Date.now() - started).toBe(0);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(30_000);
    expect(service.requests).toHaveLength(1);
  });

  it('a call whose deadline outlasts the pause waits it out', async () => {
    const service = fakeService(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '3' }), json(200, HEALTH));
    const client = makeClient(service.fetch, { maxRetries: 0 });
    await settle(client.health());
    const outcome = settle(client.health({ totalTimeoutMs: 10_000 }));
    await vi.advanceTimersByTimeAsync(3000);
    expect((await outcome).value).toEqual(HEALTH);
  });
});

describe('a key echoed by the server never reaches an error (14.5)', () => {
  const echoes: [string, () => Response][] = [
    ['in a 400 message', () => Response.json({ error: { code: 'VALIDATION_ERROR', message: `bad key ${API_KEY}`, details: [{ path: 'x', message: `got ${SECRET_PART}` }] } }, { status: 400 })],
    ['in www-authenticate of a 401', () => Response.json({ error: { code: 'INVALID_API_KEY', message: 'no' } }, { status: 401, headers: { 'www-authenticate': `ApiKey ${API_KEY}` } })],
    ['in the Location of a 302', () => new Response(null, { status: 302, headers: { location: `https://elsewhere.example/?key=${API_KEY}` } })],
    ['in a body that is not an envelope', () => new Response(`<html>${API_KEY}</html>`, { status: 500 })],
    ['as the error code', () => Response.json({ error: { code: API_KEY, message: 'no' } }, { status: 400 })],
    ['JSON-escaped (\\u0053, \\/)', () => new Response(`{"error":{"code":"VALIDATION_ERROR","message":"bad \\u0053${SECRET_PART.slice(1)} and ${API_KEY.replace('_', '\\u005f')}"}}`, { status: 400 })],
    ['percent-encoded in a Location', () => new Response(null, { status: 302, headers: { location: `https://elsewhere.example/?key=${[...API_KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}` } })],
  ];
  it.each(echoes)('%s', async (_name, reply) => {
    const error = (await makeClient(fakeService(reply).fetch, { maxRetries: 0 }).health().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    for (const text of [error.message, JSON.stringify(error), inspect(error, { depth: 10 }), JSON.stringify(error.headers), String(JSON.stringify(error.details))]) {
      expect(text).not.toContain(SECRET_PART);
    }
  });
});

describe('a key whose secret has characters that JSON or a URL escapes (14.5)', () => {
  const secret = 'Ab+/cd=ef"gh\\ij%41kl';
  const key = `service_k1d9Xa_${secret}`;
  const percent = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
  const echoes: [string, () => Response][] = [
    ['JSON-escaped in a 400 message and details', () => new Response(`{"error":{"code":"VALIDATION_ERROR","message":"bad ${JSON.stringify(key).slice(1, -1).replaceAll('/', '\\/')}","details":[{"path":"x","message":${JSON.stringify(secret)}}]}}`, { status: 400 })],
    ['URL-encoded in a Location', () => new Response(null, { status: 302, headers: { location: `https://elsewhere.example/?key=${encodeURIComponent(key)}&s=${lowerHex(encodeURIComponent(secret))}` } })],
    ['percent-encoded character by character in www-authenticate', () => Response.json({ error: { code: 'INVALID_API_KEY', message: 'no' } }, { status: 401, headers: { 'www-authenticate': `ApiKey ${percent(secret)}` } })],
  ];
  it.each(echoes)('%s', async (_name, reply) => {
    const client = new IntegrationClient({ apiKey: key, baseUrl: 'https://platform.example.com', fetch: fakeService(reply).fetch, rateLimit: false, maxRetries: 0 });
    const error = (await client.health().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    const views = [error.message, String(error.stack), JSON.stringify(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error.headers), String(JSON.stringify(error.details))];
    for (const text of views) {
      for (const form of [secret, encodeURIComponent(secret), lowerHex(encodeURIComponent(secret)), percent(secret), 'Ab+/cd', 'Ab%2B%2Fcd']) expect(text).not.toContain(form);
    }
  });
});

describe('response bodies have a size cap (14.6)', () => {
  it('a body past the cap fails with a clear error, without reading it all', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    const endless = () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            pulled++;
            controller.enqueue(chunk);
          },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    const error = await makeClient(fakeService(endless).fetch, { maxRetries: 0 }).health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(/larger than/);
    expect(pulled).toBeLessThan(40);
  });

  it('a Content-Length past the cap fails before reading', async () => {
    const big = () => new Response(JSON.stringify(HEALTH), { status: 200, headers: { 'content-length': String(1024 ** 3) } });
    const error = await makeClient(fakeService(big).fetch, { maxRetries: 0 }).health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
  });
});
