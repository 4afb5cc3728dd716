// Sequential GET /health calls against bench/workers/health-server.ts, timed in interleaved blocks:
// shared by the health and otel workers, so both figures measure the same way.

export const BENCH_API_KEY = 'service_bench_secretsecretsecret';

/** The baseline: fetch + JSON.parse, nothing else. */
export function rawHealth(url: string): () => Promise<unknown> {
  const route = `${url}/integration/v1/health`;
  const headers = { 'X-API-Key': BENCH_API_KEY, Accept: 'application/json' };
  return async () => {
    const response = await fetch(route, { headers });
    if (!response.ok) throw new Error(`raw: HTTP ${response.status}`);
    return JSON.parse(await response.text()) as unknown;
  };
}

/** Runs `calls` sequential calls, checking each answer; returns the milliseconds taken. */
export async function timeHealthCalls(call: () => Promise<unknown>, calls: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i += 1) {
    const body = (await call()) as { status?: string };
    if (body.status !== 'ok') throw new Error('unexpected /health body');
  }
  return performance.now() - start;
}

/**
 * Warms every client up, then `rounds` rounds of `calls` calls each, in blocks of `block`. Each
 * block takes the clients in another order, so that none always follows the same neighbour: a
 * client run right after another pays for the garbage that one left (a plain rotation kept the
 * SDK after the raw loop in every block, and the SDK with a token bucket, run third, measured 17%
 * faster than the same SDK without one). With n clients, block b steps through them by
 * 1 + ⌊b / n⌋ mod (n − 1) from b mod n: for a prime n, every client follows every other equally
 * often over n(n − 1) blocks. Returns each client's total ms per round.
 */
export async function interleavedRounds(
  names: readonly string[],
  time: (name: string, calls: number) => Promise<number>,
  { calls, rounds, block, warmup = 300 }: { calls: number; rounds: number; block: number; warmup?: number },
): Promise<Record<string, number[]>> {
  for (const name of names) await time(name, warmup); // JIT and open the keep-alive sockets
  const result: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round += 1) {
    const total: Record<string, number> = Object.fromEntries(names.map((name) => [name, 0]));
    for (let b = 0; b < calls / block; b += 1) {
      const n = names.length;
      const step = n > 2 ? 1 + (Math.floor(b / n) % (n - 1)) : 1;
      for (let i = 0; i < n; i += 1) {
        const name = names[(b + i * step) % n]!;
        total[name]! += await time(name, block);
      }
    }
    for (const name of names) result[name]!.push(total[name]!);
  }
  return result;
}
