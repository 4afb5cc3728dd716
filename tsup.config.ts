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
});
