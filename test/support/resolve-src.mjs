// Node module hooks: resolve `integration-sdk` and its subpaths to src/, so that examples run as
// real processes (Node's own type stripping) against the current sources without a build.
const entries = {
  'integration-sdk': '../../src/index.ts',
  'integration-sdk/webhooks': '../../src/webhooks/index.ts',
  'integration-sdk/sandbox': '../../src/sandbox/index.ts',
  'integration-sdk/inbox': '../../src/inbox/index.ts',
  'integration-sdk/inbox/sqlite': '../../src/inbox/sqlite/index.ts',
  'integration-sdk/inbox/postgres': '../../src/inbox/postgres/index.ts',
  'integration-sdk/redis': '../../src/redis/index.ts',
  'integration-sdk/otel': '../../src/otel/index.ts',
};

export async function resolve(specifier, context, nextResolve) {
  const target = entries[specifier];
  if (target) return { url: new URL(target, import.meta.url).href, shortCircuit: true };
  return nextResolve(specifier, context);
}
