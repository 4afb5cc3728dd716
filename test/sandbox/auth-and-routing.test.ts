import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { HealthSchema } from '../../src/schemas/health.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ rate: false });
});
afterAll(() => sandbox.close());

describe('health and authentication', () => {
  test('health answers who the key is', async () => {
    const one = await api(sandbox, sandbox.keys.oneStore)('GET', '/health');
    expect(one.status).toBe(200);
    expect(HealthSchema.safeParse(one.body).success).toBe(true);
    expect(one.body).toMatchObject({ status: 'ok', merchant_id: sandbox.merchantId, store_ids: [sandbox.storeIds[0]] });
    expect(one.body.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const full = await api(sandbox)('GET', '/health');
    expect(full.body.store_ids).toEqual([]);
    expect(full.body.scopes).toHaveLength(6);
  });

  test.each([
    ['missing', null, {}],
    ['in Authorization with Bearer', null, { authorization: 'Bearer KEY' }],
    ['malformed', 'service_only-two', {}],
    ['with a space inside', 'KEYSPACE', {}],
    ['unknown', 'service_nokey1_abcdef0123', {}],
  ])('a %s key gives 401 INVALID_API_KEY with the exact envelope', async (_name, key, headers: Record<string, string>) => {
    const actual = key === 'KEYSPACE' ? sandbox.apiKey.replace('_5f0c', '_ 5f0c') : key;
    const fixed = Object.fromEntries(Object.entries(headers).map(([h, v]) => [h, v.replace('KEY', sandbox.apiKey)]));
    const answer = await api(sandbox, actual)('GET', '/health', undefined, fixed);
    expect(answer.status).toBe(401);
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(Object.keys(answer.body.error)).toEqual(['code', 'message']);
    expect(answer.body.error.code).toBe('INVALID_API_KEY');
    expect(answer.body.error.message).not.toContain(sandbox.apiKey);
  });

  test('a revoked key stops working on the next request', async () => {
    const local = await createSandbox({ rate: false });
    try {
      expect((await api(local, local.keys.oneStore)('GET', '/health')).status).toBe(200);
      local.revokeKey(local.keys.oneStore);
      expect((await api(local, local.keys.oneStore)('GET', '/health')).body.error.code).toBe('INVALID_API_KEY');
    } finally {
      await local.close();
    }
  });

  test('a missing scope gives 403 with required_scope and granted_scopes', async () => {
    const answer = await api(sandbox, sandbox.keys.readOnly)('POST', '/products/bulk', { items: [] });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({
      error: { code: 'INSUFFICIENT_SCOPE', message: expect.any(String), details: { required_scope: 'catalog:write', granted_scopes: ['orders:read', 'loyalty:read'] } },
    });
    for (const [method, path, scope] of [['PATCH', '/stock', 'stock:write'], ['GET', '/webhooks', 'webhooks:manage'], ['POST', '/loyalty/points', 'loyalty:write']] as const) {
      const other = await api(sandbox, sandbox.keys.readOnly)(method, path, method === 'GET' ? undefined : {});
      expect(other.body.error.details.required_scope).toBe(scope);
    }
  });
});

describe('routing', () => {
  test.each([
    ['POST', '/orders'],
    ['GET', '/nothing-here'],
    ['PUT', '/stock'],
    ['GET', '/products/bulk'],
    ['DELETE', '/webhooks'],
    ['GET', '/health/extra'],
  ])('%s %s is 404 NOT_FOUND in the envelope', async (method, path) => {
    const answer = await api(sandbox)(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('NOT_FOUND');
    expect('details' in answer.body.error).toBe(false);
  });

  test('a path outside /integration/v1 is 404 even without a key', async () => {
    const response = await fetch(`${sandbox.url}/v2/health`);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe('NOT_FOUND');
  });

  test('a body that is not JSON is 400 VALIDATION_ERROR with details', async () => {
    const answer = await api(sandbox)('POST', '/products/bulk', '{"items": [', { 'content-type': 'application/json' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('VALIDATION_ERROR');
    expect(answer.body.error.details).toEqual([{ path: '', message: expect.any(String) }]);
  });

  test('with the feature flag off every route, health included, is 503 FEATURE_DISABLED', async () => {
    const local = await createSandbox();
    try {
      local.setFeatureEnabled(false);
      for (const [method, path] of [['GET', '/health'], ['GET', '/orders/x'], ['POST', '/orders']]) {
        const answer = await api(local)(method ?? 'GET', path ?? '/');
        expect(answer.status).toBe(503);
        expect(answer.body.error.code).toBe('FEATURE_DISABLED');
      }
      expect((await api(local, null)('GET', '/health')).status).toBe(503);
      local.setFeatureEnabled(true);
      expect((await api(local)('GET', '/health')).status).toBe(200);
    } finally {
      await local.close();
    }
  });
});
