import { rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';
import { buildEntries } from './scripts/entries.mjs';

/** The library's entries, each a subpath export (`integration-sdk/<name>`), built as ESM and CommonJS: package.json's exports. */
const entries = buildEntries();

const shared: Options = {
  target: 'node22',
  sourcemap: false,
  treeshake: true,
  // Both configs write into one folder at once: it is emptied once, below, not per config.
  clean: false,
};

export default defineConfig((flags) => {
  rmSync(flags.outDir ?? 'dist', { recursive: true, force: true });
  return [
    {
      ...shared,
      entry: entries,
      format: ['esm', 'cjs'],
      // Neutral: the webhooks entry also runs on edge runtimes (Workers, Deno, Bun).
      platform: 'neutral',
      // Shared chunks for both formats: an error class exported by two entries must be one class.
      splitting: true,
      dts: process.env.TSUP_NO_DTS ? false : { entry: entries },
    },
    {
      // The command line runs only as `npx integration-sdk`: one ESM file, no types, no CommonJS twin.
      ...shared,
      entry: { cli: 'src/cli/index.ts' },
      format: ['esm'],
      platform: 'node',
      splitting: false,
      dts: false,
    },
  ];
});
