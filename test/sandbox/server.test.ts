import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { postEndless } from '../webhooks/support/slow-senders.ts';
import { api } from './helpers.ts';

// The sandbox as a server: what it reads before answering, how it answers malformed HTTP, which
// bodies it accepts, and that its messages never carry personal data.

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox();
});
afterAll(() => sandbox.close());

/** Posts `headers`, then offers up to 256 MB without ending; resolves with the parsed answer. */
async function postEndlessToSandbox(path: string, headers: Record<string, string>) {
  const { answer, client } = postEndless(sandbox.port, `/integration/v1${path}`, headers, 4096);
  const { status, text, connection } = await answer.finally(() => client.destroy());
  return { status, connection, body: JSON.parse(text) as { error: { code: string; message: string } } };
}

/** Sends raw bytes and returns what the server wrote back before closing. */
async function raw(bytes: string): Promise<string> {
  const socket = connect(sandbox.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(bytes);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  await once(socket, 'close');
  return text;
}

function envelopeOf(response: string): { status: number; error: { code: string; message: string } } {
  const [head, body] = response.split('\r\n\r\n');
  return { status: Number(head!.split(' ')[1]), ...(JSON.parse(body!) as { error: { code: string; message: string } }) };
}

describe('the sandbox reads no more body than it must', () => {
  test('a request without a key is answered 401 before its body is read', async () => {
    const { status, body, connection } = await postEndlessToSandbox('/products/bulk', { 'content-type': 'application/json' });
    expect([status, body.error.code]).toEqual([401, 'INVALID_API_KEY']);
    expect(connection).toBe('close'); // kept alive, node:http would drain the 256 MB offered
  });

  test('a body past the cap is answered 413 with the error envelope, not read in full', async () => {
    const { status, body } = await postEndlessToSandbox('/products/bulk', { 'content-type': 'application/json', 'x-api-key': sandbox.apiKey });
    expect([status, body.error.code]).toEqual([413, 'VALIDATION_ERROR']);
    expect(body.error.message).toMatch(/larger than/);
  });
});

test('a body that never arrives is answered 408 with the envelope after 5 s', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const stalled = new Request(`${sandbox.url}/integration/v1/loyalty/points`, {
    method: 'POST',
    headers: { 'x-api-key': sandbox.apiKey, 'content-type': 'application/json' },
    body: new ReadableStream({ pull: () => new Promise(() => {}) }),
    duplex: 'half',
  } as RequestInit);
  const answer = sandbox.handle(stalled);
  await vi.waitFor(() => expect(vi.getTimerCount()).toBeGreaterThan(0), { interval: 5 });
  vi.advanceTimersByTime(5000);
  const response = await answer;
  vi.useRealTimers();
  expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([408, 'VALIDATION_ERROR']);
});

describe('malformed HTTP gets the error envelope', () => {
  test('a bad request line is answered 400 VALIDATION_ERROR as JSON', async () => {
    const response = await raw('GARBAGE\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response.toLowerCase()).toContain('content-type: application/json');
    expect(envelopeOf(response).error.code).toBe('VALIDATION_ERROR');
  });

  test('a malformed chunked body, once the request has begun, is answered 400 with the envelope too', async () => {
    const response = await raw(
      `POST /integration/v1/loyalty/points HTTP/1.1\r\nHost: x\r\nX-API-Key: ${sandbox.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(envelopeOf(response).error.code).toBe('VALIDATION_ERROR');
  });

  test('oversized headers are answered 431 with the envelope', async () => {
    const response = await raw(`GET /integration/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    expect(envelopeOf(response)).toMatchObject({ status: 431, error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('bodies must be JSON', () => {
  const credit = { phone: '11987654321', points: 5, idempotency_key: 'ct-1' };

  test.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['a missing Content-Type', {}],
  ])('%s on a route with a body is 400 VALIDATION_ERROR', async (_, headers) => {
    const response = await fetch(`${sandbox.url}/integration/v1/loyalty/points`, {
      method: 'POST',
      headers: { 'x-api-key': sandbox.apiKey, ...headers },
      body: new Blob([JSON.stringify(credit)]), // a Blob without a type: fetch adds no Content-Type
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(body.error.message).toMatch(/application\/json/);
  });

  test('application/json with a charset is accepted', async () => {
    const answer = await api(sandbox)('POST', '/loyalty/points', credit, { 'content-type': 'application/json; charset=utf-8' });
    expect(answer.status).toBe(201);
  });
});

describe('no personal data in any sandbox message', () => {
  const post = (path: string, body: unknown) => api(sandbox)('POST', path, body);

  test.each([
    ['an unknown coupon', '/loyalty/coupons/validate', { code: 'NOSUCH-SECRET-77' }, 'NOSUCH-SECRET-77'],
    ['an expired coupon', '/loyalty/coupons/validate', { code: 'SUMMER2020' }, 'SUMMER2020'],
    ['a debit above the balance', '/loyalty/points/debit', { phone: '11987654321', points: 999_999, idempotency_key: 'pii-1' }, /\d{3,}|11987654321/],
    ['an amount the rules refuse', '/loyalty/points', { phone: '11987654321', points: 1234.5, idempotency_key: 'pii-3' }, '1234.5'],
    ['an unknown customer', '/loyalty/points', { phone: '31999990000', points: 1, idempotency_key: 'pii-2' }, '31999990000'],
  ])('%s', async (_, path, body, secret) => {
    const answer = await post(path, body);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    const text = JSON.stringify(answer.body);
    if (typeof secret === 'string') expect(text.toUpperCase()).not.toContain(secret.toUpperCase());
    else expect(answer.body.error.message).not.toMatch(secret);
  });

  test('an unknown path echoes no phone number', async () => {
    const answer = await api(sandbox)('GET', '/loyalty/customers/11987654321/secret');
    expect(answer.status).toBe(404);
    expect(answer.body.error.message).not.toContain('11987654321');
  });

  test.each([
    ['a coupon code', '/loyalty/coupons/SUMMER2020', 'SUMMER2020'],
    ['an encoded phone', '/loyalty/customers/%2B55%20(11)%2098765-4321', '98765'],
    ['a customer name', '/loyalty/customers/maria.silva@example.com', 'maria'],
  ])('an unknown path echoes no %s', async (_, path, secret) => {
    const answer = await api(sandbox)('GET', path);
    expect(answer.status).toBe(404);
    expect(answer.body.error.message).not.toContain(secret);
  });

  test('a limit the rules refuse is not echoed (a phone pasted in the wrong field)', async () => {
    const answer = await api(sandbox)('GET', '/loyalty/statement?external_id=CUST-001&limit=11987654321');
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).not.toContain('11987654321');
  });

  test('an unexpected failure does not echo what failed', async () => {
    const request = new Request(`${sandbox.url}/integration/v1/health`);
    const failing = () => {
      throw new Error('customer 11987654321 has 1234 points');
    };
    Object.defineProperty(request, 'headers', { value: { get: failing, has: failing } });
    const response = await sandbox.handle(request);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toMatch(/11987654321|1234/);
  });
});
