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
 * Warms every client up, then `rounds` rounds of `calls` calls each, in blocks of `block` that
 * rotate who goes first, so none always follows the same neighbour. Returns each client's total ms
 * per round.
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
      for (let i = 0; i < names.length; i += 1) {
        const name = names[(i + b) % names.length]!;
        total[name]! += await time(name, block);
      }
    }
    for (const name of names) result[name]!.push(total[name]!);
  }
  return result;
}
