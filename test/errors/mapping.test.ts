import { inspect } from 'node:util';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { InsufficientScopeError as ScopeErrorType, OpenEnum, Scope } from '../../src/index.ts';
import {
  ApiError,
  AuthenticationError,
  AuthUnavailableError,
  ConflictError,
  ConnectionError,
  CouponInvalidError,
  CustomerNotFoundError,
  FeatureDisabledError,
  ForbiddenStoreError,
  InsufficientBalanceError,
  InsufficientScopeError,
  IntegrationError,
  InternalServerError,
  NoProgramError,
  NotFoundError,
  RateLimitError,
  ServiceUnavailableError,
  SsrfBlockedError,
  UnmappedItemsError,
  ValidationError,
  WebhookLimitReachedError,
} from '../../src/index.ts';
import { API_KEY, HEALTH, PHONE, SECRET_PART, envelope, fakeService, fails, json, makeClient, networkError } from '../support/fake-service.ts';

/** One attempt, so that retried codes surface as they are. */
async function errorFor(reply: Parameters<typeof fakeService>[0]): Promise<unknown> {
  const client = makeClient(fakeService(reply).fetch, { maxRetries: 0 });
  return client.loyalty.balance({ phone: PHONE }).then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

const SPEC_CODES: [code: string, status: number, cls: new (...args: never[]) => ApiError][] = [
  ['FEATURE_DISABLED', 503, FeatureDisabledError],
  ['INVALID_API_KEY', 401, AuthenticationError],
  ['AUTH_UNAVAILABLE', 503, AuthUnavailableError],
  ['INSUFFICIENT_SCOPE', 403, InsufficientScopeError],
  ['FORBIDDEN_STORE', 403, ForbiddenStoreError],
  ['VALIDATION_ERROR', 400, ValidationError],
  ['NOT_FOUND', 404, NotFoundError],
  ['CUSTOMER_NOT_FOUND', 404, CustomerNotFoundError],
  ['NO_PROGRAM', 404, NoProgramError],
  ['INSUFFICIENT_BALANCE', 422, InsufficientBalanceError],
  ['COUPON_INVALID', 404, CouponInvalidError],
  ['COUPON_INVALID', 422, CouponInvalidError],
  ['SSRF_BLOCKED', 400, SsrfBlockedError],
  ['WEBHOOK_LIMIT_REACHED', 409, WebhookLimitReachedError],
  ['CONFLICT', 409, ConflictError],
  ['RATE_LIMITED', 429, RateLimitError],
  ['INTERNAL', 500, InternalServerError],
  ['POINTS_UNAVAILABLE', 503, ServiceUnavailableError],
  ['COUPON_UNAVAILABLE', 503, ServiceUnavailableError],
  ['UNMAPPED_ITEMS', 422, UnmappedItemsError],
];

describe('every error code of spec part 7 becomes its class', () => {
  it.each(SPEC_CODES)('%s (%i)', async (code, status, cls) => {
    const error = await errorFor(envelope(status, code, undefined, { 'x-request-id': 'req-1' }));
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error).toMatchObject({ status, code, requestMethod: 'GET', requestPath: '/integration/v1/loyalty/balance' });
    expect((error as ApiError).headers['x-request-id']).toBe('req-1');
    expect((error as ApiError).name).toBe(cls.name);
    // Spec 2.10: details is omitted when there is none, and must stay absent.
    expect((error as ApiError).details).toBeUndefined();
    expect('details' in JSON.parse(JSON.stringify(error))).toBe(false);
  });

  it('loyalty 404s are NotFoundError too', async () => {
    expect(await errorFor(envelope(404, 'CUSTOMER_NOT_FOUND'))).toBeInstanceOf(NotFoundError);
    expect(await errorFor(envelope(404, 'NO_PROGRAM'))).toBeInstanceOf(NotFoundError);
  });

  it('INSUFFICIENT_SCOPE carries requiredScope and grantedScopes', async () => {
    const error = await errorFor(envelope(403, 'INSUFFICIENT_SCOPE', { required_scope: 'loyalty:read', granted_scopes: ['catalog:write'] }));
    expect(error).toMatchObject({ requiredScope: 'loyalty:read', grantedScopes: ['catalog:write'], details: { required_scope: 'loyalty:read' } });
  });

  it('requiredScope and grantedScopes are typed with Scope (a scope this SDK does not know still arrives as its string)', async () => {
    expectTypeOf<ScopeErrorType['requiredScope']>().toEqualTypeOf<OpenEnum<Scope> | undefined>();
    expectTypeOf<ScopeErrorType['grantedScopes']>().toEqualTypeOf<OpenEnum<Scope>[]>();
    const error = await errorFor(envelope(403, 'INSUFFICIENT_SCOPE', { required_scope: 'reports:read', granted_scopes: ['catalog:write', 7] }));
    expect(error).toMatchObject({ requiredScope: 'reports:read', grantedScopes: ['catalog:write'] });
  });

  it('VALIDATION_ERROR carries issues', async () => {
    const error = await errorFor(envelope(400, 'VALIDATION_ERROR', [{ path: 'items.0.name', message: 'required' }]));
    expect((error as ValidationError).issues).toEqual([{ path: 'items.0.name', message: 'required' }]);
  });

  it('UNMAPPED_ITEMS carries externalIds', async () => {
    expect(await errorFor(envelope(422, 'UNMAPPED_ITEMS', { external_ids: ['SKU-9', 'SKU-10'] }))).toMatchObject({ externalIds: ['SKU-9', 'SKU-10'] });
  });

  it('UNMAPPED_ITEMS with details as a plain list', async () => {
    expect(await errorFor(envelope(422, 'UNMAPPED_ITEMS', ['A', 'B']))).toMatchObject({ externalIds: ['A', 'B'] });
  });

  it('RATE_LIMITED carries retryAfterMs from Retry-After', async () => {
    const error = await errorFor(envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '2' }));
    expect((error as RateLimitError).retryAfterMs).toBe(2000);
  });

  it('an unknown code stays an ApiError with that code', async () => {
    const error = await errorFor(envelope(418, 'TEAPOT_MODE'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 418, code: 'TEAPOT_MODE', name: 'ApiError' });
    // ...and takes the class of its status family when there is one.
    expect(await errorFor(envelope(404, 'ROUTE_GONE'))).toBeInstanceOf(NotFoundError);
    for (const status of [400, 409, 422, 503]) expect(await errorFor(envelope(status, 'BRAND_NEW_CODE'))).toMatchObject({ status, code: 'BRAND_NEW_CODE' });
  });

  it('a body that is not the envelope (an HTML 502 from a proxy) still maps, with code HTTP_<status>', async () => {
    const error = await errorFor(() => new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, code: 'HTTP_502' });
    expect((error as Error).message).not.toContain('<html>');
    const down = await errorFor(() => new Response('', { status: 503 }));
    expect(down).toBeInstanceOf(ServiceUnavailableError);
    expect(down).toMatchObject({ code: 'HTTP_503' });
  });

  it('a redirect is not followed (it would carry the key elsewhere) and surfaces as HTTP_3xx', async () => {
    const error = await errorFor(() => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }));
    expect(error).toMatchObject({ status: 302, code: 'HTTP_302' });
    const service = fakeService(json(200, HEALTH));
    await makeClient(service.fetch).health();
    expect(service.requests[0]?.redirect).toBe('manual');
  });
});

describe('no error holds the key, a secret, or a phone number from a query', () => {
  const forbidden = [API_KEY, SECRET_PART, PHONE, encodeURIComponent(PHONE), '91234'];

  function expectClean(value: unknown): void {
    const views = [JSON.stringify(value), inspect(value, { depth: 10, showHidden: true }), String((value as Error)?.message), String((value as Error)?.stack)];
    for (const view of views) for (const secret of forbidden) expect(view).not.toContain(secret);
  }

  it('ApiError subclasses', async () => {
    for (const [code, status] of SPEC_CODES) expectClean(await errorFor(envelope(status, code, { granted_scopes: [] })));
  });

  it('ConnectionError: cause sanitised down to name, message and code', async () => {
    // What Node's fetch throws: TypeError('fetch failed') whose cause carries the socket code.
    const error = await errorFor(fails(networkError('ECONNREFUSED')));
    expect(error).toBeInstanceOf(ConnectionError);
    const cause = (error as ConnectionError).cause as Error & { code?: string };
    expect(cause).toBeInstanceOf(Error);
    expect(cause.code).toBe('ECONNREFUSED');
    expect(Object.keys(cause)).toEqual(['code']);
    expect(cause.message).toBe('connect ECONNREFUSED 10.0.0.1:443');
    expectClean(error);
  });

  it('ConnectionError from a fetch error that holds the init (headers with the key) and the URL', async () => {
    // A custom fetch may throw anything: here an error referencing everything it was given.
    const leaky: typeof fetch = async (input, init) => {
      throw Object.assign(new TypeError(`fetch failed: ${String(input)}`), { input, init, headers: init?.headers, cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED', init }) });
    };
    const error = await makeClient(leaky, { maxRetries: 0 }).loyalty.balance({ phone: PHONE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(((error as ConnectionError).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(Object.keys((error as ConnectionError).cause as object)).toEqual(['code']);
    expectClean(error);
  });

  it('ConnectionError from an error whose message holds the URL and the key', async () => {
    const leaky = new Error(`failed GET https://platform.example.com/integration/v1/loyalty/balance?phone=${encodeURIComponent(PHONE)} with key ${API_KEY}`);
    const error = await errorFor(fails(leaky));
    expect(error).toBeInstanceOf(ConnectionError);
    expectClean(error);
  });

  it('ResponseValidationError names paths, never values', async () => {
    const error = await errorFor(json(200, { customer: { id: 'c', name: PHONE, phone: 5511912345678, external_id: null }, points: 'many', program_id: 'p' }));
    expect(error).toMatchObject({ name: 'ResponseValidationError' });
    expectClean(error);
    expect(JSON.stringify(error)).not.toContain('5511912345678');
    expect(JSON.stringify(error)).not.toContain('many');
  });
});
