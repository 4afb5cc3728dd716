// doctor, orders and webhooks run as real processes against the sandbox.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCli, startProxiedSandbox, type CliResult, type ProxiedSandbox } from './helpers.ts';

let service: ProxiedSandbox;
let env: Record<string, string>;
const outputs: CliResult[] = [];

async function cli(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<CliResult> {
  const result = await runCli(args, { env: { ...env, ...extraEnv } });
  outputs.push(result);
  return result;
}

beforeAll(async () => {
  service = await startProxiedSandbox({ timeScale: 0.00001 });
  env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
});

afterAll(async () => {
  await service.close();
});

describe('doctor', () => {
  test('a healthy setup: every check ok or warn, exit 0; --json gives one report', async () => {
    const result = await cli(['doctor']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok\s+key\s+accepted for merchant/m);
    expect(result.stdout).toMatch(/^ok\s+scopes\s+all granted/m);
    expect(result.stdout).toMatch(/^ok\s+stores\s+the key may write all stores/m);
    expect(result.stdout).toMatch(/^ok\s+clock/m);
    const json = JSON.parse((await cli(['doctor', '--json'])).stdout) as { ok: boolean; checks: Array<{ check: string; status: string }> };
    expect(json.ok).toBe(true);
  });

  test('a one-store key names its stores and the features its missing scopes disable', async () => {
    const result = await cli(['doctor'], { INTEGRATION_API_KEY: service.sandbox.keys.oneStore });
    expect(result.stdout).toMatch(new RegExp(`stores\\s+the key may write stores ${service.sandbox.seed.keys.oneStore.storeIds[0]}`));
    const readOnly = await cli(['doctor'], { INTEGRATION_API_KEY: service.sandbox.keys.readOnly });
    expect(readOnly.stdout).toMatch(/warn\s+scopes\s+missing catalog:write \(disables catalog push/);
  });

  test('a malformed key, a disabled environment, an unreachable service: failed checks, exit 1, no crash', async () => {
    const malformed = await cli(['doctor'], { INTEGRATION_API_KEY: 'not-a-key' });
    expect(malformed.code).toBe(1);
    expect(malformed.stdout).toMatch(/^fail\s+key/m);
    service.sandbox.setFeatureEnabled(false);
    const disabled = await cli(['doctor']);
    service.sandbox.setFeatureEnabled(true);
    expect(disabled.code).toBe(1);
    expect(disabled.stdout).toMatch(/^fail\s+environment\s+.*FEATURE_DISABLED/m);
    const unreachable = await cli(['doctor'], { INTEGRATION_BASE_URL: 'http://127.0.0.1:9/integration/v1' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toMatch(/^fail\s+service\s+cannot reach the service/m);
  });

  test('a webhook whose receiver fails shows its dead deliveries with last_error', async () => {
    const receiver = createServer((_req, res) => res.writeHead(500).end());
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const created = JSON.parse((await cli(['webhooks', 'create', '--url', url, '--events', 'order.created', '--json'])).stdout) as { id: string };
    service.sandbox.createOrder();
    const [delivery] = service.sandbox.deliveries({ webhookId: created.id });
    await service.sandbox.waitForDelivery(delivery!.id, (d) => d.status === 'dead');

    const result = await cli(['doctor']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`warn\\s+webhook ${created.id}\\s+.*does not subscribe to order.status_changed`));
    // The count in English, the endpoint's consecutive failures beside it, and what to do instead of
    // naming the orders (the delivery log holds no payload).
    const { consecutive_failures } = (JSON.parse((await cli(['webhooks', 'list', '--json'])).stdout) as Array<{ id: string; consecutive_failures: number }>).find((e) => e.id === created.id)!;
    expect(consecutive_failures).toBeGreaterThan(1);
    expect(result.stdout).toMatch(new RegExp(`fail\\s+webhook \\S+ deliveries\\s+1 dead delivery, ${consecutive_failures} consecutive failures \\(last_error: [^)]+\\); fix the receiver at ${url}, then run \`integration-sdk inbox reconcile\``));
    service.sandbox.createOrder();
    const [next] = service.sandbox.deliveries({ webhookId: created.id }).filter((d) => d.id !== delivery!.id);
    await service.sandbox.waitForDelivery(next!.id, (d) => d.status === 'dead');
    expect((await cli(['doctor'])).stdout).toMatch(/deliveries\s+2 dead deliveries, \d+ consecutive failures/);
    expect((await cli(['inbox', 'stats'])).code).toBe(2);
    expect((await cli(['webhooks', 'deliveries', created.id, '--limit', '5'])).code).toBe(1);
    await cli(['webhooks', 'delete', created.id]);
    receiver.close();
  }, 60_000);
});

describe('orders and webhooks', () => {
  test('orders get and find; a missing order exits 1', async () => {
    const order = service.sandbox.createOrder({ external_order_id: 'MKT-CLI-1' });
    const got = await cli(["orders", "get", order.order_id, "--json"]);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ order_id: order.order_id });
    const found = await cli(['orders', 'find', '--external-id', 'MKT-CLI-1', '--json']);
    expect(JSON.parse(found.stdout)).toMatchObject({ order_id: order.order_id });
    const none = await cli(['orders', 'find', '--external-id', 'MKT-NONE']);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/No order/);
    const missing = await cli(['orders', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(1);
    // The service's words and what to do, in one sentence; not the error class and route.
    expect(missing.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Order not found.*: check the id/)]);
    expect(missing.stderr).not.toMatch(/NotFoundError|404 NOT_FOUND|GET \//);
    const scope = await cli(['webhooks', 'list'], { INTEGRATION_API_KEY: service.sandbox.keys.readOnly });
    expect(scope.code).toBe(1);
    expect(scope.stderr.trim().split('\n')).toEqual([expect.stringMatching(/webhooks:manage.*: grant that scope to the key, or use a key that has it\.$/)]);
  });

  test('webhooks create prints the secret once on stdout; list, test, deliveries, delete', async () => {
    const receiver = createServer((_req, res) => res.writeHead(200).end());
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/ok`;
    const created = await cli(['webhooks', 'create', '--url', url, '--events', 'order.created,order.status_changed']);
    expect(created.code).toBe(0);
    const secret = /Secret: (whsec_\S+)/.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(created.stderr).toBe('');
    const id = /Created webhook (\S+)/.exec(created.stdout)![1]!;
    const list = await cli(['webhooks', 'list']);
    expect(list.stdout).toContain(id);
    expect(list.stdout).not.toContain(secret);
    const test = await cli(['webhooks', 'test', id, '--json']);
    const { delivery_id } = JSON.parse(test.stdout) as { delivery_id: string };
    await service.sandbox.waitForDelivery(delivery_id, (d) => d.status === 'delivered');
    const deliveries = await cli(['webhooks', 'deliveries', id]);
    expect(deliveries.code).toBe(0);
    expect(deliveries.stdout).toMatch(new RegExp(`${delivery_id}\\s+\\S+\\s+delivered`));
    expect((await cli(['webhooks', 'delete', id])).code).toBe(0);
    expect((await cli(['webhooks', 'list'])).stdout).not.toContain(id);
    receiver.close();
    for (const { stdout, stderr } of outputs.filter((o) => o !== created)) expect(`${stdout}${stderr}`).not.toContain(secret);
  });
});

test('--version, --help with an example, bad arguments exit 2', async () => {
  expect((await cli(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  const help = await cli(['catalog', 'push', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toMatch(/Example:\n\s+integration-sdk catalog push/);
  expect((await cli(['catalog', 'push'])).code).toBe(2);
  expect((await cli(['catalog', 'push', 'x.csv', '--concurrency', '0'])).code).toBe(2);
  expect((await cli(['nope'])).code).toBe(2);
});

test('--help of every command and group shows an example; a bad argument is one line on stderr', async () => {
  const commands = ['', 'doctor', 'catalog', 'catalog push', 'stock', 'stock push', 'orders', 'orders get', 'orders find', 'webhooks', 'webhooks list', 'webhooks create', 'webhooks test', 'webhooks deliveries', 'webhooks delete', 'inbox', 'inbox stats', 'inbox dead', 'inbox retry', 'inbox retry-dead', 'sandbox'];
  for (const command of commands) {
    const help = await cli([...command.split(' ').filter(Boolean), '--help']);
    expect(help.code, command).toBe(0);
    expect(help.stdout, command).toMatch(/Example:\n\s+.*integration-sdk /);
  }
  // Each group lists its subcommands, each with a one-line description.
  for (const [group, subcommands] of [['catalog', ['push']], ['stock', ['push']], ['orders', ['get', 'find']], ['webhooks', ['list', 'create', 'test', 'deliveries', 'delete']], ['inbox', ['stats', 'dead', 'retry', 'retry-dead']]] as const) {
    const help = await cli([group, '--help']);
    for (const sub of subcommands) expect(help.stdout, `${group} ${sub}`).toMatch(new RegExp(`^  ${sub}\\b.*\\S {2,}[a-z][^\\n]{8,}$`, 'm'));
  }
  for (const args of [['catalog', 'push', 'x.csv', '--bogus'], ['nope'], ['webhooks', 'create', '--url', 'https://erp.example.com/hooks']]) {
    const result = await cli(args);
    expect(result.code, args.join(' ')).toBe(2);
    expect(result.stderr.trim().split('\n'), args.join(' ')).toEqual([expect.stringMatching(/--help/)]);
  }
}, 90_000);

test('a key given as a plain argument is refused, exit 2, without echoing it, even with no key in the environment', async () => {
  const key = service.sandbox.keys.full;
  for (const args of [['doctor', key], ['orders', 'get', key], ['doctor', '--api-key', key], ['doctor', '--api-key-file', key]]) {
    const result = await cli(args, { INTEGRATION_API_KEY: undefined });
    expect(result.code, args[1]).toBe(2);
    expect(result.stderr).toMatch(/^The API key is never taken as an argument/);
    expect(`${result.stdout}${result.stderr}`).not.toContain(key.split('_').at(-1));
  }
  expect(service.requests.filter((r) => r.path.endsWith(`/orders/${key}`))).toHaveLength(0);
});

test('no output shows the key', () => {
  for (const { stdout, stderr } of outputs) expect(`${stdout}${stderr}`).not.toContain(service.sandbox.keys.full);
});
