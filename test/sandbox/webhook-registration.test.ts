import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type HostResolver, type Sandbox } from 'integration-sdk/sandbox';
import { CreatedWebhookSchema, WebhookEndpointListSchema } from '../../src/schemas/webhooks.ts';
import { api } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox.close());

const hosts: Record<string, string[]> = {
  'erp.example.com': ['93.184.216.34'],
  'internal.example.com': ['93.184.216.34', '10.1.2.3'],
  'v6.example.com': ['fd00::1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
};
const resolveHost: HostResolver = async (host) => {
  const found = hosts[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found;
};

const register = (url: string, events: unknown = ['order.created'], key?: string) => api(sandbox, key)('POST', '/webhooks', { url, events });

describe('POST /webhooks with the production anti-SSRF check', () => {
  test.each([
    'http://erp.example.com/hooks',
    'https://10.0.0.5/hooks',
    'https://127.0.0.1/hooks',
    'https://169.254.169.254/latest',
    'https://172.16.3.4/',
    'https://192.168.1.10/',
    'https://[::1]/hooks',
    'https://[fc00::5]/hooks',
    'https://internal.example.com/hooks',
    'https://v6.example.com/hooks',
    'https://mapped.example.com/hooks',
    'https://does-not-resolve.example.com/hooks',
    'ftp://erp.example.com/hooks',
  ])('%s is refused with 400 SSRF_BLOCKED', async (url) => {
    sandbox = await createSandbox({ allowInsecureReceivers: false, resolveHost, rate: false });
    const answer = await register(url);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('SSRF_BLOCKED');
    expect((await api(sandbox)('GET', '/webhooks')).body.data).toEqual([]);
  });

  test('a public HTTPS host is accepted; the secret is shown once', async () => {
    sandbox = await createSandbox({ allowInsecureReceivers: false, resolveHost, rate: false });
    const created = await register('https://erp.example.com/hooks', ['order.created', 'order.status_changed']);
    expect(created.status).toBe(201);
    expect(CreatedWebhookSchema.safeParse(created.body).success).toBe(true);
    expect(created.body.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(created.body.warning).toMatch(/once/);
    const list = await api(sandbox)('GET', '/webhooks');
    expect(WebhookEndpointListSchema.safeParse(list.body).success).toBe(true);
    expect(list.body.data).toEqual([{ id: created.body.id, url: 'https://erp.example.com/hooks', events: ['order.created', 'order.status_changed'], consecutive_failures: 0, created_at: expect.any(String) }]);
    expect(JSON.stringify(list.body)).not.toContain(created.body.secret);
  });
});

describe('webhook endpoint rules', () => {
  test('allowInsecureReceivers (the default) accepts http://127.0.0.1', async () => {
    sandbox = await createSandbox({ rate: false });
    expect((await register('http://127.0.0.1:9/hooks')).status).toBe(201);
  });

  test('at most 5 endpoints per key: the 6th is 409 WEBHOOK_LIMIT_REACHED; other keys have their own', async () => {
    sandbox = await createSandbox({ rate: false });
    for (let i = 0; i < 5; i++) expect((await register(`http://127.0.0.1:9/h${i}`)).status).toBe(201);
    const sixth = await register('http://127.0.0.1:9/h5');
    expect(sixth.status).toBe(409);
    expect(sixth.body.error.code).toBe('WEBHOOK_LIMIT_REACHED');
    expect((await register('http://127.0.0.1:9/other', undefined, sandbox.keys.oneStore)).status).toBe(201);
    const first = (await api(sandbox)('GET', '/webhooks')).body.data[0].id;
    expect((await api(sandbox)('DELETE', `/webhooks/${first}`)).status).toBe(204);
    expect((await register('http://127.0.0.1:9/h6')).status).toBe(201);
  });

  test('unknown event names and bad bodies are 400 VALIDATION_ERROR with paths', async () => {
    sandbox = await createSandbox({ rate: false });
    const unknown = await register('http://127.0.0.1:9/h', ['order.created', 'stock.changed']);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'events[1]', message: expect.stringContaining('stock.changed') }] });
    const empty = await register('http://127.0.0.1:9/h', []);
    expect(empty.body.error.details[0].path).toBe('events');
    const noUrl = await api(sandbox)('POST', '/webhooks', { events: ['order.created'] });
    expect(noUrl.body.error.details[0].path).toBe('url');
  });

  test('DELETE answers 204 with no body, then 404; another key cannot see or delete the endpoint', async () => {
    sandbox = await createSandbox({ rate: false });
    const { id } = (await register('http://127.0.0.1:9/h')).body;
    const other = api(sandbox, sandbox.keys.oneStore);
    expect((await other('DELETE', `/webhooks/${id}`)).status).toBe(404);
    expect((await other('GET', `/webhooks/${id}/deliveries`)).status).toBe(404);
    expect((await other('GET', '/webhooks')).body.data).toEqual([]);
    const deleted = await api(sandbox)('DELETE', `/webhooks/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await api(sandbox)('DELETE', `/webhooks/${id}`)).body.error.code).toBe('NOT_FOUND');
  });

  test('the deliveries limit must be 1 to 100', async () => {
    sandbox = await createSandbox({ rate: false });
    const { id } = (await register('http://127.0.0.1:9/h')).body;
    for (const limit of ['0', '101', 'abc', '2.5']) {
      const answer = await api(sandbox)('GET', `/webhooks/${id}/deliveries?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details[0].path).toBe('limit');
    }
    expect((await api(sandbox)('GET', `/webhooks/${id}/deliveries?limit=100`)).body).toEqual({ data: [] });
  });
});
