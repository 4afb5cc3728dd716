import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';

let sandbox: Sandbox;
let server: ReturnType<typeof setupServer>;
const BASE = 'https://erp-sandbox.test';

beforeAll(async () => {
  sandbox = await createSandbox({ rate: false });
  // The recipe of docs/sandbox.md, on an origin no socket serves: only handle() can answer.
  server = setupServer(http.all(`${BASE}/*`, ({ request }) => sandbox.handle(request).catch(() => HttpResponse.error())));
  server.listen({ onUnhandledFrame: 'error' });
});
afterAll(async () => {
  server.close();
  await sandbox.close();
});

describe('handle() behind msw', () => {
  test('answers the same service as the socket, state included', async () => {
    const headers = { 'x-api-key': sandbox.apiKey, 'content-type': 'application/json' };
    const health = await fetch(`${BASE}/integration/v1/health`, { headers });
    expect(health.status).toBe(200);
    expect((await health.json()).merchant_id).toBe(sandbox.merchantId);
    const bulk = await fetch(`${BASE}/integration/v1/products/bulk`, { method: 'POST', headers, body: JSON.stringify({ items: [{ external_id: 'MSW-1', name: 'via msw', price: 1 }] }) });
    expect((await bulk.json()).summary.created).toBe(1);
    expect(sandbox.getProduct('MSW-1')?.name).toBe('via msw');
    const removed = await fetch(`${BASE}/integration/v1/orders`, { method: 'POST', headers, body: '{}' });
    expect(removed.status).toBe(404);
  });

  test('a dropped-connection fault surfaces as a fetch TypeError', async () => {
    sandbox.setFaults({ rate: 1, kinds: ['drop'] });
    try {
      await expect(fetch(`${BASE}/integration/v1/health`, { headers: { 'x-api-key': sandbox.apiKey } })).rejects.toThrow(TypeError);
    } finally {
      sandbox.setFaults(null);
    }
  });
});
