import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, IntegrationClient, IntegrationError, type IntegrationClientOptions } from '../../src/index.ts';
import { API_KEY, BASE_URL, HEALTH, SECRET_PART, fakeService, json } from '../support/fake-service.ts';

function configError(options: Partial<IntegrationClientOptions> | undefined): ConfigurationError {
  try {
    new IntegrationClient(options as IntegrationClientOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(IntegrationError);
    return error as ConfigurationError;
  }
  throw new Error('expected a ConfigurationError');
}

describe('the constructor rejects a bad apiKey, naming the rule and never the key', () => {
  const cases: [string, unknown, RegExp][] = [
    ['missing', undefined, /apiKey is missing/],
    ['empty', '', /apiKey is missing/],
    ['not a string', 42, /must be a string/],
    ['a trailing line break', `${API_KEY}\n`, /contains whitespace/],
    ['a space inside', 'service_k1d9Xa_S3cr3t Part', /contains whitespace/],
    ['a Bearer prefix', `Bearer ${API_KEY}`, /contains whitespace/],
    ['the secret part only', SECRET_PART, /does not start with "service_"/],
    ['no secret part', 'service_k1d9Xa', /service_<key_id>_<secret>/],
    ['an empty key id', 'service__S3cr3tPart0fTheKey', /service_<key_id>_<secret>/],
    ['an empty secret', 'service_k1d9Xa_', /service_<key_id>_<secret>/],
  ];
  it.each(cases)('%s', (_name, apiKey, message) => {
    const error = configError({ apiKey: apiKey as string, baseUrl: BASE_URL });
    expect(error.message).toMatch(message);
    for (const view of [error.message, JSON.stringify(error), inspect(error), String(error.stack)]) {
      expect(view).not.toContain(SECRET_PART);
      expect(view).not.toContain('S3cr3t');
      expect(view).not.toContain('k1d9Xa');
    }
  });

  it('no options at all', () => {
    expect(configError(undefined).message).toMatch(/options object/);
  });
});

describe('the constructor checks baseUrl', () => {
  const rejected: [string, unknown, RegExp][] = [
    ['missing', undefined, /baseUrl is missing/],
    ['not a URL', 'platform.example.com', /not an absolute URL/],
    ['another scheme', 'ftp://platform.example.com', /https/],
    ['http to a public host', 'http://platform.example.com', /not loopback/],
    ['http to a private address', 'http://10.0.0.5:8080', /not loopback/],
    ['http to a host that only looks local', 'http://127.0.0.1.evil.example', /not loopback/],
    ['credentials in the URL', 'https://user:pw@platform.example.com', /credentials/],
    ['a query string', 'https://platform.example.com/?x=1', /query/],
  ];
  it.each(rejected)('rejects %s', (_name, baseUrl, message) => {
    expect(configError({ apiKey: API_KEY, baseUrl: baseUrl as string }).message).toMatch(message);
  });

  const normalised: [string, string][] = [
    ['https://platform.example.com', 'https://platform.example.com/integration/v1/health'],
    ['https://platform.example.com/', 'https://platform.example.com/integration/v1/health'],
    ['https://platform.example.com/integration/v1', 'https://platform.example.com/integration/v1/health'],
    ['https://platform.example.com/integration/v1//', 'https://platform.example.com/integration/v1/health'],
    ['http://localhost:8787', 'http://localhost:8787/integration/v1/health'],
    ['http://127.0.0.1:8787/integration/v1/', 'http://127.0.0.1:8787/integration/v1/health'],
    ['http://127.5.6.7', 'http://127.5.6.7/integration/v1/health'],
    ['http://[::1]:9000', 'http://[::1]:9000/integration/v1/health'],
  ];
  it.each(normalised)('accepts %s', async (baseUrl, expected) => {
    const service = fakeService(json(200, HEALTH));
    await new IntegrationClient({ apiKey: API_KEY, baseUrl, fetch: service.fetch }).health();
    expect(service.requests[0]?.url.href).toBe(expected);
  });
});

describe('the constructor checks the other options', () => {
  const rejected: [string, Partial<IntegrationClientOptions>, RegExp][] = [
    ['timeoutMs 0', { timeoutMs: 0 }, /timeoutMs/],
    ['totalTimeoutMs negative', { totalTimeoutMs: -1 }, /totalTimeoutMs/],
    ['maxRetries fractional', { maxRetries: 1.5 }, /maxRetries/],
    ['maxRetryAfterMs NaN', { maxRetryAfterMs: Number.NaN }, /maxRetryAfterMs/],
    ['rateLimit without a rate', { rateLimit: { requestsPerMinute: 0, burst: 1 } }, /requestsPerMinute/],
    ['rateLimit with burst 0', { rateLimit: { requestsPerMinute: 60, burst: 0 } }, /burst/],
    ['rateLimit true', { rateLimit: true as never }, /rateLimit/],
    ['fetch not a function', { fetch: 'fetch' as never }, /fetch/],
  ];
  it.each(rejected)('%s', (_name, options, message) => {
    expect(configError({ apiKey: API_KEY, baseUrl: BASE_URL, ...options }).message).toMatch(message);
  });
});

describe('the client never shows its key', () => {
  it('JSON.stringify, util.inspect and String of a real client hold neither the key nor its secret', () => {
    const client = new IntegrationClient({ apiKey: API_KEY, baseUrl: BASE_URL, logger: console });
    const views = [JSON.stringify(client), inspect(client, { depth: Infinity, showHidden: true, getters: true }), String(client), inspect(client.loyalty, { depth: Infinity, showHidden: true })];
    for (const view of views) {
      expect(view).not.toContain(API_KEY);
      expect(view).not.toContain(SECRET_PART);
    }
  });
});
