import { createServer } from 'node:net';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, IntegrationClient, InsufficientScopeError } from '../../src/index.ts';
import { API_KEY, HEALTH, PHONE } from '../support/fake-service.ts';

// Through the real global fetch (intercepted by msw), as users run it.
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const baseUrl = 'https://platform.example.com';

describe('through globalThis.fetch (msw)', () => {
  it('health: headers as sent on the wire', async () => {
    let seen: Headers | undefined;
    server.use(
      http.get(`${baseUrl}/integration/v1/health`, ({ request }) => {
        seen = request.headers;
        return HttpResponse.json(HEALTH);
      }),
    );
    await expect(new IntegrationClient({ apiKey: API_KEY, baseUrl }).health()).resolves.toEqual(HEALTH);
    expect(seen?.get('x-api-key')).toBe(API_KEY);
    expect(seen?.get('accept')).toBe('application/json');
  });

  it('an error envelope maps to its class', async () => {
    server.use(
      http.get(`${baseUrl}/integration/v1/loyalty/balance`, () =>
        HttpResponse.json({ error: { code: 'INSUFFICIENT_SCOPE', message: 'needs loyalty:read', details: { required_scope: 'loyalty:read', granted_scopes: [] } } }, { status: 403 }),
      ),
    );
    const error = await new IntegrationClient({ apiKey: API_KEY, baseUrl }).loyalty.balance({ phone: PHONE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect(error).toMatchObject({ requiredScope: 'loyalty:read', grantedScopes: [] });
  });
});

describe('a real refused connection', () => {
  it('is a ConnectionError with code ECONNREFUSED, and webhooks.create is retried on it', async () => {
    server.close(); // let this request reach the real network stack
    try {
      const port = await closedPort();
      const debug: unknown[] = [];
      const client = new IntegrationClient({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 1, random: () => 0, logger: { debug: (_m, f) => debug.push(f) } });
      const error = await client.webhooks.create({ url: 'https://erp.example.com/h', events: ['order.created'] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(((error as ConnectionError).cause as { code?: string }).code).toBe('ECONNREFUSED');
      expect(debug).toHaveLength(2);
      expect(JSON.stringify(error)).not.toContain(API_KEY);
    } finally {
      server.listen({ onUnhandledFrame: 'error' });
    }
  });
});

/** A port that was just free: nothing listens there. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
