import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    webhooks: 'src/webhooks/index.ts',
    sandbox: 'src/sandbox/index.ts',
    cli: 'src/sandbox/cli.ts',
  },
  format: ['esm', 'cjs'],
  // Shared chunks for both formats: an error class exported by two entries must be one class.
  splitting: true,
  dts: process.env.TSUP_NO_DTS ? false : { entry: { index: 'src/index.ts', webhooks: 'src/webhooks/index.ts', sandbox: 'src/sandbox/index.ts' } },
  clean: true,
  target: 'node22',
  platform: 'neutral',
  sourcemap: false,
  treeshake: true,
  // zod and p-retry are bundled: Node loads zod/mini's many files in ~55 ms, the bundled subset
  // we use in ~3 ms (see docs/benchmarks.md), and the CommonJS build then requires no ESM-only
  // package. zod stays a dependency for the schema types in the .d.ts files.
  noExternal: ['zod', 'p-retry', 'is-network-error'],
});
