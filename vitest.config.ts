import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { packageEntries } from './scripts/entries.mjs';

const root = new URL('./', import.meta.url);
const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

export default defineConfig({
  resolve: {
    // Every entry of package.json's exports, to its source: tests import the package as users do.
    alias: packageEntries().map((entry) => ({ find: exactly(entry.specifier), replacement: fileURLToPath(new URL(entry.source, root)) })),
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The command line bundled once, a Postgres data directory initialised once (see the file).
    globalSetup: ['test/support/global-setup.ts'],
    // A guard against a hang, not a measure: with more workers than cores (below) and a loaded
    // machine, a test that starts a dozen CLI processes has taken 8 s where it takes 2 alone.
    testTimeout: 60_000,
    pool: 'forks',
    // Twice the cores, at most 8 (vitest's default, one fewer than the cores, runs one file at a
    // time on two): most files wait on processes, sockets and servers rather than on the CPU.
    maxWorkers: Math.min(2 * availableParallelism(), 8),
  },
});
