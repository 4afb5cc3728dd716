// One process of an integration calling a tenant from several loops at once, for the revoked-key
// test: each loop calls until its client refuses the tenant (TenantKeyInvalidError), then makes
// AFTER more calls, which must send nothing. It prints "running" once every loop had an answer,
// then one JSON line: per loop, each request it sent (when its fetch started, its status) and when
// it first met TenantKeyInvalidError; and when this process recorded the 401 (its logger's warn).
// The loops start calling once a line arrives on stdin.
import { createTenants, TenantKeyInvalidError } from '../../../src/tenants/index.ts';
import { postgresTenantStore } from '../../../src/tenants/postgres/index.ts';
import { sqliteTenantStore } from '../../../src/tenants/sqlite/index.ts';

const { TENANTS_BASE_URL, TENANTS_DB, TENANTS_PG_SCHEMA, TENANTS_ENCRYPTION_KEY, TENANTS_HOOK, TENANTS_ID, LOOPS } = process.env;
const AFTER = 20;
let markedAt: number | null = null;
const loops = Array.from({ length: Number(LOOPS ?? 3) }, () => ({ sent: [] as { startedAt: number; status: number }[], refusedAt: null as number | null, after: 0 }));
// Each loop's calls go through this fetch (one client per loop), so each request is counted once, at its start.
const fetchOf = (loop: number): typeof fetch => async (input, init) => {
  const startedAt = Date.now();
  const response = await fetch(input, init);
  loops[loop]!.sent.push({ startedAt, status: response.status });
  return response;
};
const storeOf = () => (TENANTS_DB!.startsWith('postgres') ? postgresTenantStore({ connectionString: TENANTS_DB!, schema: TENANTS_PG_SCHEMA! }) : sqliteTenantStore({ path: TENANTS_DB! }));
// One registry per loop (its own fetch), as many workers of one process would each hold.
const registries = loops.map((_, loop) =>
  createTenants({
    store: storeOf(),
    encryptionKey: TENANTS_ENCRYPTION_KEY!,
    baseUrl: TENANTS_BASE_URL!,
    webhookUrl: (id) => `${TENANTS_HOOK}/${id}`,
    clientOptions: { fetch: fetchOf(loop), maxRetries: 0 },
    logger: { warn: () => (markedAt ??= Date.now()) },
  }),
);

let answered = 0;
let released!: () => void;
const go = new Promise<void>((resolve) => (released = resolve));
process.stdin.once('data', () => released());

await Promise.all(
  loops.map(async (state, loop) => {
    const client = registries[loop]!.client(TENANTS_ID!);
    let first = true;
    for (;;) {
      try {
        await client.health();
      } catch (error) {
        if (!(error instanceof TenantKeyInvalidError)) throw error;
        state.refusedAt ??= Date.now();
        if (++state.after > AFTER) return;
      }
      if (first) {
        first = false;
        if (++answered === loops.length) process.stdout.write('running\n');
        await go;
      }
    }
  }),
);
process.stdout.write(`${JSON.stringify({ markedAt, loops })}\n`);
await Promise.all(registries.map((registry) => registry.close()));
