#!/usr/bin/env node
// `npx integration-sdk sandbox`: start the emulator, print what a developer needs to point an
// ERP at it, and stay up until SIGINT or SIGTERM.
import { parseCliArgs, USAGE } from './cli-args.ts';
import { createSandbox } from './create-sandbox.ts';
import type { Sandbox } from './types.ts';

function banner(sandbox: Sandbox, timeScale: number): string {
  const { seed } = sandbox;
  const key = (name: keyof typeof seed.keys) => {
    const info = seed.keys[name];
    const stores = info.storeIds.length === 0 ? 'all stores' : `store ${info.storeIds.join(', ')}`;
    return `  ${name.padEnd(9)} ${info.apiKey}\n            scopes: ${info.scopes.join(' ')}; ${stores}`;
  };
  return [
    `Integration API sandbox listening on ${sandbox.url}  (routes under ${sandbox.url}/integration/v1)`,
    '',
    'Keys (send as X-API-Key):',
    key('full'),
    key('oneStore'),
    key('readOnly'),
    '',
    `Merchant ${seed.merchantId}`,
    ...seed.stores.map((s) => `  store ${s.id}  ${s.name}`),
    `Customers: ${seed.customers.map((c) => `${c.name} ${c.phone} (${c.points} pts)`).join(', ')}`,
    `Coupons: ${Object.entries(seed.coupons).map(([kind, code]) => `${code} (${kind})`).join(', ')}`,
    `Webhook retries scaled by ${timeScale}. Ctrl-C to stop.`,
  ].join('\n');
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCliArgs>;
  try {
    parsed = parseCliArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (parsed.command === 'help') {
    console.log(USAGE);
    return;
  }
  const sandbox = await createSandbox(parsed.options);
  console.log(banner(sandbox, parsed.options.timeScale));
  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the sandbox.`);
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
