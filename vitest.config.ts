import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^integration-sdk\/webhooks$/, replacement: src('webhooks/index.ts') },
      { find: /^integration-sdk\/inbox\/sqlite$/, replacement: src('inbox/sqlite/index.ts') },
      { find: /^integration-sdk\/inbox\/postgres$/, replacement: src('inbox/postgres/index.ts') },
      { find: /^integration-sdk\/inbox$/, replacement: src('inbox/index.ts') },
      { find: /^integration-sdk\/sync\/sqlite$/, replacement: src('sync/sqlite/index.ts') },
      { find: /^integration-sdk\/sync\/postgres$/, replacement: src('sync/postgres/index.ts') },
      { find: /^integration-sdk\/sync$/, replacement: src('sync/index.ts') },
      { find: /^integration-sdk\/tenants\/sqlite$/, replacement: src('tenants/sqlite/index.ts') },
      { find: /^integration-sdk\/tenants\/postgres$/, replacement: src('tenants/postgres/index.ts') },
      { find: /^integration-sdk\/tenants$/, replacement: src('tenants/index.ts') },
      { find: /^integration-sdk\/dashboard$/, replacement: src('dashboard/index.ts') },
      { find: /^integration-sdk\/redis$/, replacement: src('redis/index.ts') },
      { find: /^integration-sdk\/otel$/, replacement: src('otel/index.ts') },
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
