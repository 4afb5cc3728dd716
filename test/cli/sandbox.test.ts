import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { formatLogEntry, duration } from '../../src/cli/sandbox-format.ts';
import { expectedSignature, startReceiver } from '../sandbox/helpers.ts';
import { cleanEnv, cliArgs, runCli } from './helpers.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

interface RunningSandbox {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything printed so far. */
  output: () => string;
  /** Resolves once stdout has a line matching `pattern`. */
  waitFor: (pattern: RegExp) => Promise<string>;
}

/** Starts `integration-sdk sandbox` as a real process and waits for its banner. */
async function startCli(args: string[]): Promise<RunningSandbox> {
  const child = spawn(process.execPath, cliArgs(['sandbox', ...args]), { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const check = () => {
    waiters = waiters.filter((w) => {
      const line = output.split('\n').find((l) => w.pattern.test(l));
      if (line === undefined) return true;
      w.resolve(line);
      return false;
    });
  };
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    check();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
  const waitFor = (pattern: RegExp) => new Promise<string>((resolve, reject) => {
    waiters.push({ pattern, resolve });
    check();
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  await waitFor(/^Log: one line per request/);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
  return { child, url, output: () => output, waitFor };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('integration-sdk sandbox', () => {
  test('rejects bad options with exit 2', async () => {
    expect((await runCli(['sandbox', '--port', 'x'])).code).toBe(2);
    expect((await runCli(['sandbox', '--port', '70000'])).code).toBe(2);
    expect((await runCli(['sandbox', '--time-scale'])).code).toBe(2);
    const unknown = await runCli(['serve']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command/);
  });

  test('listens on 4010 by default; a port in use is one sentence and exit 2', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => void blocker.close());
    const busy = await runCli(['sandbox', '--port', String((blocker.address() as AddressInfo).port)]);
    expect(busy.code).toBe(2);
    expect(busy.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Port \d+ is in use \(another sandbox\?\): stop it, or pick another with --port <n> \(0: any free port\)\.$/)]);
    // The default: 4010, or, if something on this machine holds it, the same sentence about 4010.
    const started = spawn(process.execPath, cliArgs(['sandbox']), { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    started.stdout.on('data', (c: Buffer) => (output += c.toString()));
    started.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = once(started, 'exit');
    await Promise.race([exited, new Promise<void>((resolve) => started.stdout.on('data', () => output.includes('\nLog: one line') && resolve()))]);
    if (started.exitCode === null) {
      expect(output).toMatch(/^Integration API sandbox listening on http:\/\/127\.0\.0\.1:4010 /);
      started.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    } else {
      expect(started.exitCode).toBe(2);
      expect(output).toMatch(/^Port 4010 is in use/);
    }
  });

  test('banner: a ready export line with the fixed keys, the other keys, the retry window; serves; stops on SIGTERM', async () => {
    const sandbox = await startCli(['--port', '0', '--time-scale=0.001']);
    const output = sandbox.output();
    expect(output).toContain(`\nexport INTEGRATION_BASE_URL=${sandbox.url} INTEGRATION_API_KEY=service_sbxfull01_5f0c9a3e7b2d4c18a6e1f9b0d3c7a254\n`);
    expect(output).toMatch(/^ {2}oneStore +service_sbxstore01_\w+\n {12}every scope, Loja Centro only$/m);
    expect(output).toMatch(/^ {2}readOnly +service_sbxread01_\w+\n {12}orders:read loyalty:read, all stores$/m);
    expect(output).toContain('Retries:    6 attempts in 52.6 s (scaled by 0.001; 14 h 36 min unscaled)\n');
    // Fits an 80-column terminal, except the export line, which must stay one line to be pasted.
    expect(output.split('\n').filter((line) => line.length > 80 && !line.startsWith('export '))).toEqual([]);
    expect(output).toContain('integration-sdk sandbox order create');
    const health = await fetch(`${sandbox.url}/integration/v1/health`, { headers: { 'x-api-key': 'service_sbxfull01_5f0c9a3e7b2d4c18a6e1f9b0d3c7a254' } });
    expect(health.status).toBe(200);
    await sandbox.waitFor(/GET {4}\/integration\/v1\/health +200 {2}\d+ ms$/);
    sandbox.child.kill('SIGTERM');
    const [code] = await once(sandbox.child, 'exit');
    expect(code).toBe(0);
  });

  test('logs one line per request: method, route template, status, ms; never the id, the query or the key', async () => {
    const sandbox = await startCli(['--port', '0']);
    const banner = sandbox.output();
    const key = 'service_sbxfull01_5f0c9a3e7b2d4c18a6e1f9b0d3c7a254';
    const id = '0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50';
    await fetch(`${sandbox.url}/integration/v1/orders/${id}`, { headers: { 'x-api-key': key } });
    await fetch(`${sandbox.url}/integration/v1/loyalty/balance?phone=5511987654321`, { headers: { 'x-api-key': key } });
    await sandbox.waitFor(/\/loyalty\/balance/);
    const log = sandbox.output().slice(banner.length);
    expect(log).toMatch(/^\d\d:\d\d:\d\d {2}GET {4}\/integration\/v1\/orders\/:id +404 {2}\d+ ms$/m);
    expect(log).toMatch(/^\d\d:\d\d:\d\d {2}GET {4}\/integration\/v1\/loyalty\/balance +200 {2}\d+ ms$/m);
    for (const secret of [id, '5511987654321', key]) expect(log).not.toContain(secret);
  });

  test('order create, order status and deliver drive the running sandbox; each attempt is logged', async () => {
    const sandbox = await startCli(['--port', '0']);
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const env = { INTEGRATION_BASE_URL: sandbox.url };

    const deliver = await runCli(['sandbox', 'deliver', '--url', receiver.url], { env });
    expect(deliver.code).toBe(0);
    const secret = /^Secret: (whsec_[0-9a-f]{64})$/m.exec(deliver.stdout)?.[1] ?? '';
    expect(deliver.stdout).toMatch(/^Registered endpoint [0-9a-f-]{36}\n {2}for http:\/\/127\.0\.0\.1:\d+\/hooks\n {2}events order\.created, order\.status_changed: later orders reach it too\.$/m);
    expect(deliver.stdout).toMatch(/^order\.created, new order [0-9a-f-]{36}\n {2}attempt 1\/6 answered 200: delivered\.$/m);
    const [first] = receiver.received as [typeof receiver.received[0]];
    expect(first.headers['x-service-signature-256']).toBe(expectedSignature(secret, String(first.headers['x-service-timestamp']), first.rawBody));

    const created = await runCli(['sandbox', 'order', 'create', '--store', 'b3e1d2c4-5f60-4a7b-8c9d-0e1f2a3b4c5d'], { env });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Order 1002 created in Loja Norte: 2 × SKU-1001, total [\d.]+, status confirmed\.$/m);
    expect(created.stdout).toContain(`order.created sent to 1 endpoint`);
    const orderId = /order_id ([0-9a-f-]{36})/.exec(created.stdout)?.[1] ?? '';

    const changed = await runCli(['sandbox', 'order', 'status', orderId, 'dispatched'], { env });
    expect(changed.code).toBe(0);
    expect(changed.stdout).toMatch(/^Order 1002: confirmed → dispatched\.$/m);
    await receiver.waitForRequests(3);
    expect(receiver.received.map((r) => r.headers['x-service-event'])).toEqual(['order.created', 'order.created', 'order.status_changed']);

    for (const output of [deliver.stdout, created.stdout, changed.stdout]) expect(output.split('\n').filter((line) => line.length > 80)).toEqual([]);
    const endpoint = escape(receiver.url.replace('http://127.0.0.1', '')); // a local receiver: :port/path
    await sandbox.waitFor(new RegExp(`order\\.status_changed ${endpoint} {2}200 {2}1/6 delivered$`));
    const log = sandbox.output();
    expect(log).toMatch(/POST {3}\/_sandbox\/deliveries +200 {2}\d+ ms$/m);
    expect(log).toMatch(/POST {3}\/_sandbox\/orders +201 {2}\d+ ms$/m);
    expect(log).toMatch(/POST {3}\/_sandbox\/orders\/:id\/status +200 {2}\d+ ms$/m);
    expect(log.match(new RegExp(`order\\.created +${endpoint} {2}200 {2}1/6 delivered$`, 'gm'))).toHaveLength(2);
    for (const line of log.split('\n').filter((l) => /^\d\d:\d\d:\d\d /.test(l))) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(log).not.toContain(secret);
    expect(log).not.toContain(orderId);
  });

  test('with --time-scale, a receiver down past the retry window is dead in seconds, every attempt logged', async () => {
    const sandbox = await startCli(['--port', '0', '--time-scale', '0.00002']);
    const down = 'http://127.0.0.1:9/down';
    const deliver = await runCli(['sandbox', 'deliver', '--url', down, '--event', 'webhook.test'], { env: { INTEGRATION_BASE_URL: `${sandbox.url}/integration/v1` } });
    expect(deliver.code).toBe(1);
    expect(deliver.stdout).toMatch(/^webhook\.test\n {2}attempt 1\/6 failed, refused: connection failed: .*\n {2}The sandbox tries again in \d+ ms; its log shows each attempt\.$/m);
    await sandbox.waitFor(/ 6\/6, dead$/);
    const attempts = sandbox.output().split('\n').filter((line) => line.includes(`webhook.test${' '.repeat(9)}:9/down  refused  `));
    expect(attempts.map((line) => / (\d)\/6/.exec(line)?.[1])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(attempts[0]).toMatch(/ 1\/6, retry in 1 ms$/);
  });

  test('deliver keeps one endpoint of its own: run after run to new URLs, nothing fails on the endpoint limit', async () => {
    const sandbox = await startCli(['--port', '0']);
    const env = { INTEGRATION_BASE_URL: sandbox.url };
    const key = 'service_sbxfull01_5f0c9a3e7b2d4c18a6e1f9b0d3c7a254';
    const listed = async () => {
      const answer = await fetch(`${sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': key } });
      return ((await answer.json()) as { data: Array<{ id: string; url: string }> }).data;
    };
    // The user's own endpoint, which deliver must leave alone.
    const own = await fetch(`${sandbox.url}/integration/v1/webhooks`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://127.0.0.1:9/mine', events: ['order.created'] }) });
    const mine = ((await own.json()) as { id: string }).id;
    let previous: { id: string; url: string } | undefined;
    for (let run = 1; run <= 6; run++) {
      const url = `http://127.0.0.1:9/receiver-${run}`; // a receiver on a new port each run, as examples are started
      const result = await runCli(['sandbox', 'deliver', '--url', url, '--event', 'webhook.test', '--json'], { env });
      expect(result.stderr, `run ${run}`).toBe('');
      const answer = JSON.parse(result.stdout) as { webhook: { id: string; registered: boolean; secret: string }; replaced: { id: string; url: string } | null };
      expect(answer.webhook.registered).toBe(true);
      expect(answer.webhook.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
      expect(answer.replaced).toEqual(previous ?? null);
      previous = { id: answer.webhook.id, url };
      expect((await listed()).map((e) => e.id).sort()).toEqual([mine, answer.webhook.id].sort());
    }
    // The same URL again: its endpoint is used as it is.
    const again = await runCli(['sandbox', 'deliver', '--url', previous!.url, '--event', 'webhook.test'], { env });
    expect(again.stdout).toMatch(new RegExp(`^Using endpoint ${previous!.id}\n {2}for http://127\\.0\\.0\\.1:9/receiver-6\n`));
    const other = await runCli(['sandbox', 'deliver', '--url', 'http://127.0.0.1:9/receiver-7', '--event', 'webhook.test'], { env });
    expect(other.stdout).toContain(`  Deleted endpoint ${previous!.id},\n  registered by an earlier deliver for http://127.0.0.1:9/receiver-6.\n`);
    // What deliver says of its endpoint fits 80 columns (the receiver's error, the sandbox's own text, may not).
    for (const line of [...again.stdout.split('\n'), ...other.stdout.split('\n')].filter((l) => !l.startsWith('  attempt'))) expect(line.length, line).toBeLessThanOrEqual(80);
    // Room for the user's own endpoints: three more make five.
    for (let i = 0; i < 3; i++) {
      const created = await fetch(`${sandbox.url}/integration/v1/webhooks`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:9/more-${i}`, events: ['order.created'] }) });
      expect(created.status).toBe(201);
    }
    expect(await listed()).toHaveLength(5);
  });

  test('the controls: no sandbox running, an unknown order, a bad status; each one sentence', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const none = await runCli(['sandbox', 'order', 'create', '--base-url', `http://127.0.0.1:${port}`]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(`No sandbox answers at http://127.0.0.1:${port}: start one (integration-sdk sandbox) or set --base-url.\n`);

    const sandbox = await startCli(['--port', '0']);
    const env = { INTEGRATION_BASE_URL: sandbox.url };
    const unknown = await runCli(['sandbox', 'order', 'status', '0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50', 'cancelled'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^No order with this id in this sandbox/);
    const bad = await runCli(['sandbox', 'order', 'status', '0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50', 'shipped'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('Invalid argument: status must be one of pending, confirmed, preparing, dispatched, delivered, cancelled.\n');
    const store = await runCli(['sandbox', 'order', 'create', '--store', 'nope'], { env });
    expect(store.code).toBe(2);
    expect(store.stderr).toMatch(/^Invalid argument: --store is not a store of this sandbox/);
  });

  test('every subcommand has --help with an example', async () => {
    for (const args of [['sandbox'], ['sandbox', 'order'], ['sandbox', 'order', 'create'], ['sandbox', 'order', 'status'], ['sandbox', 'deliver']]) {
      const help = await runCli([...args, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Examples?:\n {2}integration-sdk sandbox/);
    }
  });
});

describe('the sandbox log line', () => {
  const at = new Date(2026, 10, 26, 9, 41, 7);

  test('a request and a delivery attempt', () => {
    expect(formatLogEntry({ type: 'request', method: 'DELETE', route: '/integration/v1/webhooks/:id', status: 204, ms: 3.4 }, at))
      .toBe('09:41:07  DELETE /integration/v1/webhooks/:id             204  3 ms');
    expect(formatLogEntry({ type: 'request', method: 'GET', route: '/integration/v1/health', status: null, ms: 1 }, at)).toContain(' dropped  1 ms');
    const attempt = { type: 'delivery', event: 'order.created', deliveryId: 'd', webhookId: 'w', endpoint: 'http://127.0.0.1:3000/hooks', attempt: 2, maxAttempts: 6 } as const;
    expect(formatLogEntry({ ...attempt, status: 500, outcome: 'retrying', error: 'receiver answered 500', retryInMs: 300_000 }, at))
      .toBe('09:41:07  order.created        :3000/hooks  500  2/6, retry in 5 min');
    expect(formatLogEntry({ ...attempt, status: null, outcome: 'dead', error: 'timeout: no complete answer within 10 s', retryInMs: null }, at))
      .toMatch(/ :3000\/hooks {2}timeout {2}2\/6, dead$/);
    expect(formatLogEntry({ ...attempt, status: 200, outcome: 'delivered', error: null, retryInMs: null }, at)).toMatch(/ 200 {2}2\/6 delivered$/);
  });

  test('fits 80 columns: the longest event and answer with a local receiver whole; a long route or remote receiver cut in its middle', () => {
    const attempt = { type: 'delivery', event: 'order.status_changed', deliveryId: 'd', webhookId: 'w', attempt: 5, maxAttempts: 6, status: null, outcome: 'retrying', error: 'connection failed: reset', retryInMs: 43_200 } as const;
    const local = formatLogEntry({ ...attempt, endpoint: 'http://127.0.0.1:3000/webhooks' }, at);
    expect(local).toBe('09:41:07  order.status_changed :3000/webhooks  conn error  5/6, retry in 43.2 s');
    const remote = formatLogEntry({ ...attempt, endpoint: 'https://erp.example.com.br/integracao/webhooks/pedidos' }, at);
    expect(remote).toBe('09:41:07  order.status_changed https:/…pedidos  conn error  5/6, retry in 43.2 s');
    const route = formatLogEntry({ type: 'request', method: 'DELETE', route: `/integration/v1/${'{…}/'.repeat(20)}x`, status: 404, ms: 12_345 }, at);
    for (const line of [local, remote, route]) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(remote).toHaveLength(80);
    expect(route).toMatch(/^09:41:07 {2}DELETE \/integration\/v1\/\{…\}.*….*\/x 404 {2}12345 ms$/);
  });

  test('durations read as a person would say them', () => {
    expect([60, 1_800, 60_000, 300_000, 7_200_000, 52_560_000].map(duration)).toEqual(['60 ms', '1.8 s', '1 min', '5 min', '2 h', '14 h 36 min']);
  });
});
