import { afterEach, describe, expect, test } from 'vitest';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { ManualClock } from './helpers.ts';

let sandbox: Sandbox;
afterEach(() => sandbox.close());

const health = (key: string) => sandbox.handle(new Request('http://sandbox.test/integration/v1/health', { headers: { 'x-api-key': key } }));

async function burst(key: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await health(key)).status);
  return statuses;
}

describe('token buckets', () => {
  test('per key: 120 at once, then 429 RATE_LIMITED with Retry-After, then 2 per second', async () => {
    const clock = new ManualClock();
    sandbox = await createSandbox({ clock });
    expect(await burst(sandbox.apiKey, 120)).toEqual(Array(120).fill(200));
    const limited = await health(sandbox.apiKey);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    // Another key has its own bucket.
    expect((await health(sandbox.keys.oneStore)).status).toBe(200);
    clock.advance(499);
    expect((await health(sandbox.apiKey)).status).toBe(429);
    clock.advance(1);
    expect(await burst(sandbox.apiKey, 2)).toEqual([200, 429]);
    clock.advance(10_000);
    expect(await burst(sandbox.apiKey, 21)).toEqual([...Array(20).fill(200), 429]);
  });

  test('per IP: 300 at once across keys, then 5 per second', async () => {
    const clock = new ManualClock();
    sandbox = await createSandbox({ clock, rate: { perKey: false } });
    expect(await burst(sandbox.apiKey, 300)).toEqual(Array(300).fill(200));
    const limited = await health(sandbox.keys.readOnly);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    clock.advance(1000);
    expect(await burst(sandbox.keys.oneStore, 6)).toEqual([200, 200, 200, 200, 200, 429]);
  });

  test('Retry-After is whole seconds rounded up from the refill rate', async () => {
    const clock = new ManualClock();
    sandbox = await createSandbox({ clock, rate: { perKey: { capacity: 2, refillPerSecond: 0.3 }, perIp: false } });
    await burst(sandbox.apiKey, 2);
    expect((await health(sandbox.apiKey)).headers.get('retry-after')).toBe('4');
    clock.advance(3000);
    expect((await health(sandbox.apiKey)).headers.get('retry-after')).toBe('1');
  });

  test('rate: false turns limiting off', async () => {
    sandbox = await createSandbox({ rate: false });
    expect(new Set(await burst(sandbox.apiKey, 400))).toEqual(new Set([200]));
  });
});
