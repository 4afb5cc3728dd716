import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type FaultOptions, type Sandbox } from 'integration-sdk/sandbox';
import { api } from './helpers.ts';

const opened: Sandbox[] = [];
afterEach(async () => {
  while (opened.length) await opened.pop()?.close();
});

async function open(faults: FaultOptions): Promise<Sandbox> {
  const sandbox = await createSandbox({ rate: false, faults });
  opened.push(sandbox);
  return sandbox;
}

async function outcomes(sandbox: Sandbox, count: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < count; i++) {
    try {
      const response = await sandbox.handle(new Request('http://sandbox.test/integration/v1/health', { headers: { 'x-api-key': sandbox.apiKey } }));
      seen.push(String(response.status));
    } catch (error) {
      seen.push((error as Error).name);
    }
  }
  return seen;
}

describe('faults', () => {
  test('the same seed gives the same faults; another seed gives others', async () => {
    const a = await outcomes(await open({ rate: 0.5, seed: 7 }), 40);
    const b = await outcomes(await open({ rate: 0.5, seed: 7 }), 40);
    const c = await outcomes(await open({ rate: 0.5, seed: 8 }), 40);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(new Set(a)).toEqual(new Set(['200', '500', '503', '429', 'TypeError']));
  });

  test('the share follows the rate; 0 never fails', async () => {
    const some = await outcomes(await open({ rate: 0.2, seed: 1 }), 200);
    const failed = some.filter((s) => s !== '200').length;
    expect(failed).toBeGreaterThan(20);
    expect(failed).toBeLessThan(60);
    expect(new Set(await outcomes(await open({ rate: 0, seed: 1 }), 50))).toEqual(new Set(['200']));
  });

  test('early faults are not processed; processed500 is, and so is a dropped connection', async () => {
    const early = await open({ rate: 1, seed: 1, kinds: ['error503'] });
    const credit = { external_id: 'CUST-002', points: 5, idempotency_key: 'k1' };
    const answer = await api(early)('POST', '/loyalty/points', credit);
    expect([answer.status, answer.body.error.code]).toEqual([503, 'AUTH_UNAVAILABLE']);
    early.setFaults(null);
    expect((await api(early)('POST', '/loyalty/points', credit)).status).toBe(201);

    const late = await open({ rate: 1, seed: 1, kinds: ['processed500'] });
    const failed = await api(late)('POST', '/loyalty/points', credit);
    expect([failed.status, failed.body.error.code]).toEqual([500, 'INTERNAL']);
    late.setFaults(null);
    expect((await api(late)('POST', '/loyalty/points', credit)).status).toBe(200);

    const dropped = await open({ rate: 1, seed: 1, kinds: ['drop'] });
    await expect(api(dropped)('POST', '/loyalty/points', credit)).rejects.toThrow(TypeError);
    dropped.setFaults(null);
    const replay = await api(dropped)('POST', '/loyalty/points', credit);
    expect([replay.status, replay.body.balance]).toEqual([200, 45]);
  });

  test('an injected 429 carries Retry-After', async () => {
    const sandbox = await open({ rate: 1, kinds: ['error429'] });
    const answer = await api(sandbox)('GET', '/health');
    expect([answer.status, answer.headers.get('retry-after')]).toEqual([429, '1']);
  });

  test('bad fault options are refused at once', async () => {
    await expect(createSandbox({ faults: { rate: 2 } })).rejects.toThrow(RangeError);
    await expect(createSandbox({ faults: { rate: 0.1, kinds: [] } })).rejects.toThrow(RangeError);
  });
});
