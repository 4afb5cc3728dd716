// Codes the service may send that collide with Object.prototype names, and bodies JSON cannot
// serialise: each still ends in a typed error, and nothing is sent twice or misreported.
import { describe, expect, it } from 'vitest';
import { ApiError, IntegrationError, InvalidInputError } from '../../src/index.ts';
import { envelope, fakeService, makeClient, PHONE } from '../support/fake-service.ts';

describe('an error code named like an Object.prototype member', () => {
  it.each([
    ['constructor', 400],
    ['toString', 400],
    ['__proto__', 409],
    ['hasOwnProperty', 422],
  ])('%s still becomes an ApiError carrying that code', async (code, status) => {
    const client = makeClient(fakeService(envelope(status, code)).fetch, { maxRetries: 0 });
    const error = await client.loyalty.balance({ phone: PHONE }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status, code, name: 'ApiError' });
  });
});

describe('a body JSON cannot carry', () => {
  it.each([
    ['a BigInt', () => ({ points: 1n })],
    ['a cycle', () => {
      const body: Record<string, unknown> = {};
      body.self = body;
      return body;
    }],
    ['a toJSON that throws', () => ({ toJSON: () => { throw new Error(`secret ${PHONE}`); } })],
  ])('%s is an InvalidInputError before sending, not a retried ConnectionError', async (_, makeBody) => {
    const service = fakeService(envelope(500, 'INTERNAL'));
    const client = makeClient(service.fetch, { maxRetries: 3, random: () => 0 });
    const error = await client.request({ method: 'PUT', path: '/some/new/route', body: makeBody() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toBeInstanceOf(IntegrationError);
    expect((error as InvalidInputError).issues).toEqual([{ path: 'body', message: expect.stringContaining('JSON') }]);
    expect(String((error as Error).message)).not.toContain(PHONE);
    expect(service.requests).toHaveLength(0);
  });
});
