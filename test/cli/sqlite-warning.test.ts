import { afterEach, expect, it } from 'vitest';
import { hideSqliteExperimentalWarning } from '../../src/cli/sqlite-warning.ts';

let restore = () => {};
afterEach(() => restore());

it("drops Node 22's ExperimentalWarning for node:sqlite and lets every other warning through", async () => {
  const seen: string[] = [];
  const listener = (warning: Error) => seen.push(`${warning.name}: ${warning.message}`);
  process.on('warning', listener);
  try {
    restore = hideSqliteExperimentalWarning();
    // What Node's own emitExperimentalWarning('SQLite') calls.
    process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
    process.emitWarning('Some other feature is an experimental feature and might change at any time', 'ExperimentalWarning');
    process.emitWarning('SQLite is an experimental feature and might change at any time', { type: 'ExperimentalWarning' });
    process.emitWarning('a deprecated call', 'DeprecationWarning');
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  expect(seen).toEqual(['ExperimentalWarning: Some other feature is an experimental feature and might change at any time', 'DeprecationWarning: a deprecated call']);
});
