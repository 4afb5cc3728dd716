/**
 * Loyalty credits whose responses are lost after processing (issue 4 part 7, item 4): every
 * credit lands exactly once, because the SDK makes one idempotency_key per call and sends it on
 * every attempt.
 */
import { expect, test } from 'vitest';
import { ConnectionError, TimeoutError } from 'integration-sdk';
import { clientFor, startSandbox } from './helpers.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface PointsBody {
  external_id: string;
  points: number;
  idempotency_key: string;
}

test('N credits without an idempotency_key under processed-then-lost answers: credited exactly once each', async () => {
  const N = 30;
  // Half of all requests are processed, then answered 500 or dropped.
  const sandbox = await startSandbox({ faults: { rate: 0.5, seed: 3, kinds: ['processed500', 'drop'] } });
  const { client, exchanges } = clientFor(sandbox, { maxRetries: 10 });

  const results = [];
  for (let n = 1; n <= N; n++) {
    const before = exchanges.length;
    const result = await client.loyalty.credit({ external_id: 'CUST-002', points: n, description: `credit ${n}` });
    const attempts = exchanges.slice(before);
    // Every attempt of this call carried the same body, with the key the result reports.
    expect(result.idempotency_key).toMatch(UUID_V4);
    for (const attempt of attempts) {
      expect(attempt.path).toBe('/integration/v1/loyalty/points');
      expect(attempt.body).toEqual({ external_id: 'CUST-002', points: n, description: `credit ${n}`, idempotency_key: result.idempotency_key });
    }
    expect(attempts.at(-1)?.status).toBe(attempts.length === 1 ? 201 : 200); // a replay answers 200 with the original entry
    expect(result.entry).toMatchObject({ type: 'credit', points: n, idempotency_key: result.idempotency_key });
    results.push({ result, attempts: attempts.length });
  }

  // The faults did happen: some calls needed more than one attempt, each lost attempt processed.
  const lost = exchanges.filter((e) => e.status !== 201 && e.status !== 200);
  expect(lost.length).toBeGreaterThanOrEqual(5);
  expect(new Set(lost.map((e) => (e.status === 'dropped' ? 'drop' : `${e.status} ${e.code}`)))).toEqual(new Set(['drop', '500 INTERNAL']));
  expect(results.filter((r) => r.attempts > 1).length).toBeGreaterThanOrEqual(3);
  expect(new Set(results.map((r) => r.result.idempotency_key)).size).toBe(N);

  sandbox.setFaults(null);
  const sum = (N * (N + 1)) / 2;
  const balance = await client.loyalty.balance({ external_id: 'CUST-002' });
  expect(balance.points).toBe(40 + sum);
  expect(results.at(-1)?.result.balance).toBe(40 + sum);
  const statement = await client.loyalty.statement({ external_id: 'CUST-002' }, { limit: 100 });
  // One entry per credit, newest first, each with its call's key, then the opening balance.
  expect(statement.entries.map((e) => [e.type, e.points, e.idempotency_key])).toEqual([
    ...results.map(({ result }, i) => ['credit', i + 1, result.idempotency_key]).reverse(),
    ['credit', 40, null],
  ]);
});

test('an explicit idempotency_key is sent as given on every attempt; a later call with it credits nothing', async () => {
  const sandbox = await startSandbox({ faults: { rate: 1, kinds: ['drop'] } });
  const { client, exchanges } = clientFor(sandbox, { maxRetries: 2 });
  // Every attempt is processed and then lost: the call fails, but the credit happened once.
  const error = await client.loyalty.credit({ external_id: 'CUST-001', points: 70, idempotency_key: 'erp-order-1001' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConnectionError);
  expect(error).not.toBeInstanceOf(TimeoutError);
  expect(exchanges.map((e) => [e.status, (e.body as PointsBody).idempotency_key])).toEqual([
    ['dropped', 'erp-order-1001'], ['dropped', 'erp-order-1001'], ['dropped', 'erp-order-1001'],
  ]);
  sandbox.setFaults(null);
  // Repeating the call after the crash, with the same key, is safe.
  const repeat = await client.loyalty.credit({ external_id: 'CUST-001', points: 70, idempotency_key: 'erp-order-1001' });
  expect(repeat).toMatchObject({ balance: 570, idempotency_key: 'erp-order-1001', entry: { points: 70, idempotency_key: 'erp-order-1001' } });
  expect(exchanges.at(-1)?.status).toBe(200);
  expect((await client.loyalty.balance({ external_id: 'CUST-001' })).points).toBe(570);
});
