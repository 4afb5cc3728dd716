// Node module hooks: resolve `integration-sdk` and each of its subpaths to src/, so that examples
// run as real processes (Node's own type stripping) against the current sources without a build.
// The map is package.json's exports, so a new entry needs nothing here.
import { packageEntries } from '../../scripts/entries.mjs';

const root = new URL('../../', import.meta.url);
const sources = new Map(packageEntries().map((entry) => [entry.specifier, new URL(entry.source, root).href]));

/** The hook as `module.registerHooks` takes it (in this thread, synchronous). */
export function resolveSync(specifier, context, nextResolve) {
  const url = sources.get(specifier);
  if (url) return { url, shortCircuit: true };
  return nextResolve(specifier, context);
}

/** The hook as `module.register` takes it (on the hooks thread). */
export async function resolve(specifier, context, nextResolve) {
  return resolveSync(specifier, context, nextResolve);
}
