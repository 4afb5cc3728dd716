// `integration-sdk sandbox`: start the emulator on a fixed port, print what a developer needs to
// point an integration at it, log every request and delivery attempt, and stay up until SIGINT or
// SIGTERM. The subcommands that drive a running sandbox are in sandbox-control.ts.
import { InvalidArgumentError, type Command } from 'commander';
import { createSandbox, RETRY_DELAYS_SECONDS, type Sandbox } from '../sandbox/index.ts';
import { UsageError } from './config.ts';
import { defineControlCommands, type Runner } from './sandbox-control.ts';
import { duration, formatLogEntry } from './sandbox-format.ts';

/** The CLI's port, fixed so that a `.env` (`INTEGRATION_BASE_URL`) keeps working between runs. */
export const DEFAULT_SANDBOX_PORT = 4010;

/** Every delay of the schedule, i.e. from attempt 1 to attempt 6 (14 h 36 min). */
const RETRY_WINDOW_MS = RETRY_DELAYS_SECONDS.reduce((sum, s) => sum + s, 0) * 1000;

/** Options of `integration-sdk sandbox`. */
export interface SandboxCommandOptions {
  port: number;
  timeScale: number;
  allowInsecureReceivers: boolean;
}

/** Registers `sandbox` (start) and its subcommands on the command `index.ts` created. */
export function defineSandboxCommand(sandbox: Command, run: Runner): void {
  sandbox
    .description('start a local emulator of Integration API v1 (port 4010), or drive a running one: order create | order status | deliver')
    .option('--port <n>', `TCP port on 127.0.0.1 (0: a free port)`, port, DEFAULT_SANDBOX_PORT)
    .option('--time-scale <x>', `multiply the webhook retry schedule: 0.001 runs the ${duration(RETRY_WINDOW_MS)} of 6 attempts in ${duration(RETRY_WINDOW_MS * 0.001)}`, timeScale, 1)
    .option('--secure-receivers', 'apply the production anti-SSRF check to webhook URLs (https only, no private addresses)')
    .addHelpText('after', `
Prints a ready "export INTEGRATION_BASE_URL=... INTEGRATION_API_KEY=..." line (the keys never change),
then one line per request and per delivery attempt. Runs until Ctrl-C.

Example:
  integration-sdk sandbox
  integration-sdk sandbox --time-scale 0.001      # a receiver down past the retry window: dead in ${duration(RETRY_WINDOW_MS * 0.001)}
  integration-sdk sandbox order create             # in another terminal`)
    .action(run(async (options: { port: number; timeScale: number; secureReceivers?: boolean }) => {
      await runSandbox({ port: options.port, timeScale: options.timeScale, allowInsecureReceivers: !options.secureReceivers });
      return -1; // keeps running until a signal
    }));
  defineControlCommands(sandbox, run);
}

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('--port must be a whole number from 0 to 65535.');
  return Number(value);
}

function timeScale(value: string): number {
  const scale = Number(value);
  if (value.trim() === '' || !(scale >= 0) || !Number.isFinite(scale)) throw new InvalidArgumentError('--time-scale must be a number ≥ 0, e.g. 0.001.');
  return scale;
}

/** Runs the sandbox until SIGINT/SIGTERM. The sandbox's own keys are printed on purpose: they are test keys. */
export async function runSandbox(options: SandboxCommandOptions): Promise<void> {
  let sandbox: Sandbox;
  try {
    sandbox = await createSandbox({ ...options, log: (entry) => console.log(formatLogEntry(entry)) });
  } catch (error) {
    throw listenFailure(error, options.port) ?? error;
  }
  const stop = (signal: string) => {
    console.log(`\n${signal}: stopping the sandbox.`);
    void sandbox.close().then(() => process.exit(0));
  };
  // Before the banner: a script that stops the sandbox as soon as it reads the banner must find
  // the handlers in place (the default action of SIGTERM would exit with no code).
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  console.log(banner(sandbox, options.timeScale));
}

function listenFailure(error: unknown, port: number): UsageError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') {
    return new UsageError(`Port ${port} is in use (another sandbox?): stop it, or pick another with --port <n> (0: any free port).`);
  }
  if (code === 'EACCES') return new UsageError(`Port ${port} needs privileges this user lacks: pick a port above 1023 with --port <n>.`);
  return null;
}

/** The banner fits an 80-column terminal, except the export line, which must stay one line to be pasted. */
const WIDTH = 80;
const LABEL = 12;

function banner(sandbox: Sandbox, scale: number): string {
  const { seed } = sandbox;
  const keyLines = (name: 'full' | 'oneStore' | 'readOnly') => {
    const info = seed.keys[name];
    const scopes = info.scopes.length === 6 ? 'every scope' : info.scopes.join(' ');
    const stores = info.storeIds.length === 0 ? 'all stores' : `${info.storeIds.map((id) => seed.stores.find((s) => s.id === id)?.name ?? id).join(', ')} only`;
    return [`  ${name.padEnd(LABEL - 2)}${info.apiKey}`, `${''.padEnd(LABEL)}${scopes}, ${stores}`];
  };
  const retries = scale === 1
    ? `6 attempts in ${duration(RETRY_WINDOW_MS)} (real speed; --time-scale 0.001: ${duration(RETRY_WINDOW_MS * 0.001)})`
    : `6 attempts in ${duration(RETRY_WINDOW_MS * scale)} (scaled by ${scale}; ${duration(RETRY_WINDOW_MS)} unscaled)`;
  return [
    `Integration API sandbox listening on ${sandbox.url} (Ctrl-C to stop)`,
    '',
    'Ready; state in memory. In your shell or .env (the keys never change):',
    `export INTEGRATION_BASE_URL=${sandbox.url} INTEGRATION_API_KEY=${sandbox.keys.full}`,
    '',
    'Keys (X-API-Key):',
    ...keyLines('full'),
    ...keyLines('oneStore'),
    ...keyLines('readOnly'),
    labelled('Merchant:', [seed.merchantId]),
    ...seed.stores.map((s, i) => `${(i === 0 ? 'Stores:' : '').padEnd(LABEL)}${s.id}  ${s.name}`),
    labelled('Customers:', seed.customers.map((c) => `${c.name} ${c.phone} (${c.points} pts)`)),
    labelled('Coupons:', Object.entries(seed.coupons).map(([kind, code]) => `${code} (${kind})`)),
    labelled('Retries:', [retries]),
    '',
    'Make things happen, from another terminal:',
    '  integration-sdk sandbox order create [--store <id>]',
    '  integration-sdk sandbox order status <order_id> <status>',
    '  integration-sdk sandbox deliver --url <url> [--event webhook.test]',
    'Log: one line per request and per delivery attempt; a receiver on this machine',
    '     shows as :port/path.',
  ].join('\n');
}

/** `Label:     a, b, c`, wrapped under the label's column to fit an 80-column terminal. */
function labelled(label: string, items: string[]): string {
  const lines = [''];
  items.forEach((item, i) => {
    const text = i < items.length - 1 ? `${item},` : item;
    const current = lines[lines.length - 1] ?? '';
    if (current !== '' && LABEL + current.length + 1 + text.length > WIDTH) lines.push(text);
    else lines[lines.length - 1] = current === '' ? text : `${current} ${text}`;
  });
  return lines.map((line, i) => `${(i === 0 ? label : '').padEnd(LABEL)}${line}`).join('\n');
}
