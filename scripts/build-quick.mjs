// Builds dist/ (JavaScript only, no .d.ts) when it is missing or older than src/, so that the demo
// and the sandbox command run the code a user would import.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const built = 'dist/index.js';
if (!existsSync(built) || statSync(built).mtimeMs < Math.max(newest('src'), statSync('tsup.config.ts').mtimeMs)) {
  const result = spawnSync('tsup', ['--silent'], { stdio: 'inherit', env: { ...process.env, TSUP_NO_DTS: '1' } });
  process.exit(result.status ?? 1);
}
