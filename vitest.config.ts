import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^integration-sdk\/webhooks$/, replacement: src('webhooks/index.ts') },
      { find: /^integration-sdk\/sandbox$/, replacement: src('sandbox/index.ts') },
      { find: /^integration-sdk$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
