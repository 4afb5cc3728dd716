// `integration-sdk sandbox`: start the emulator, print what a developer needs to point an ERP at
// it, and stay up until SIGINT or SIGTERM.
import { createSandbox } from '../sandbox/index.ts';
import type { Sandbox } from '../sandbox/index.ts';

/** Options of `integration-sdk sandbox`. */
export interface SandboxCommandOptions {
  port: number;
  timeScale: number;
  allowInsecureReceivers: boolean;
}

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

/** Runs the sandbox until SIGINT/SIGTERM. The sandbox's own keys are printed on purpose: they are test keys. */
export async function runSandbox(options: SandboxCommandOptions): Promise<void> {
  const sandbox = await createSandbox(options);
  console.log(banner(sandbox, options.timeScale));
  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the sandbox.`);
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
