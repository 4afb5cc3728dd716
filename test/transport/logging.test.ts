import { describe, expect, it } from 'vitest';
import { API_KEY, ENTRY, PHONE, SECRET_PART, envelope, fakeService, fails, json, makeClient, networkError } from '../support/fake-service.ts';

function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

describe('logging', () => {
  it('one debug line per attempt: method, path without query, status, attempt, ms', async () => {
    const { logger, lines } = recordingLogger();
    const service = fakeService(envelope(500, 'INTERNAL'), json(200, { customer: { id: 'c', name: null, phone: null, external_id: null }, points: 1, program_id: 'p' }));
    await makeClient(service.fetch, { logger, random: () => 0 }).loyalty.balance({ phone: PHONE });
    expect(lines.filter((line) => line.level === 'debug').map((line) => line.fields)).toEqual([
      { method: 'GET', path: '/integration/v1/loyalty/balance', status: 500, attempt: 1, ms: expect.any(Number) },
      { method: 'GET', path: '/integration/v1/loyalty/balance', status: 200, attempt: 2, ms: expect.any(Number) },
    ]);
  });

  it('a failed connection is logged by error name; a 429 warns that the client pauses', async () => {
    const { logger, lines } = recordingLogger();
    const service = fakeService(fails(networkError('ECONNRESET')), envelope(429, 'RATE_LIMITED', undefined, { 'retry-after': '0' }), json(200, { entry: ENTRY, balance: 1 }));
    await makeClient(service.fetch, { logger, random: () => 0 }).loyalty.credit({ phone: PHONE, points: 1 });
    expect(lines[0]?.fields).toMatchObject({ error: 'ConnectionError', attempt: 1 });
    expect(lines.find((line) => line.level === 'warn')?.fields).toEqual({ path: '/integration/v1/loyalty/points', pauseMs: 0 });
  });

  it('never receives the key, a body, or a query value', async () => {
    const { logger, lines } = recordingLogger();
    const service = fakeService(envelope(400, 'VALIDATION_ERROR', [{ path: 'phone', message: `bad ${PHONE}` }]));
    await makeClient(service.fetch, { logger }).loyalty.credit({ phone: PHONE, points: 7, idempotency_key: 'idem-secretish' }).catch(() => {});
    const text = JSON.stringify(lines);
    for (const forbidden of [API_KEY, SECRET_PART, PHONE, '91234', 'idem-secretish', 'VALIDATION_ERROR happened']) expect(text).not.toContain(forbidden);
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('a logger that throws', () => {
  it('does not fail the request it reports on', async () => {
    const throwing = { debug: () => { throw new Error('disk full'); }, warn: () => { throw new Error('disk full'); } };
    const service = fakeService(envelope(500, 'INTERNAL'), json(200, { entry: ENTRY, balance: 1 }));
    const result = await makeClient(service.fetch, { logger: throwing, random: () => 0 }).loyalty.credit({ phone: PHONE, points: 1 });
    expect(result.balance).toBe(1);
    expect(service.requests).toHaveLength(2);
  });
});
