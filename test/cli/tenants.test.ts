// `integration-sdk tenants ...` and `doctor --tenants`, run as real processes against the sandbox
// with many merchants: keys from the environment only, records printed, never a key or a secret.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createTenants } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { onCleanup, startReceiver, startSandbox } from '../e2e/helpers.ts';
import { connectedClient, RedisServer, skipRedis } from '../redis/redis-server.ts';
import { runCli, type CliResult } from './helpers.ts';

const dir = tempDir('cli-tenants');
afterAll(() => dir.remove());

const encryptionKey = () => randomBytes(32).toString('base64');

function expectNoSecret(result: CliResult, secrets: string[]): void {
  for (const secret of secrets) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

describe('integration-sdk tenants', () => {
  it('connect, list, doctor --tenants after a revoked key, update-key, rekey and disconnect', async () => {
    const sandbox = await startSandbox({ merchants: [{}, {}] });
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const [a, b] = sandbox.merchants;
    const key = encryptionKey();
    const env = {
      INTEGRATION_BASE_URL: sandbox.url,
      INTEGRATION_TENANTS: `${dir.path}/tenants.db`,
      INTEGRATION_TENANTS_KEY: key,
      INTEGRATION_TENANTS_WEBHOOK_URL: `${receiver.url}/integration/{tenant}`,
    };
    const secrets = [a!.keys[0]!.apiKey, a!.keys[0]!.apiKey.split('_')[2]!, b!.keys[0]!.apiKey, key];

    const connected = await runCli(['tenants', 'connect', 'loja-a'], { env: { ...env, INTEGRATION_API_KEY: a!.keys[0]!.apiKey } });
    expect(connected.stderr).toBe('');
    expect(connected.code).toBe(0);
    expect(connected.stdout).toMatch(new RegExp(`^Connected loja-a: active, merchant ${a!.merchantId}, all stores, endpoint [0-9a-f-]{36}\\.`));
    const json = await runCli(['tenants', 'connect', 'loja-b', '--json'], { env: { ...env, INTEGRATION_API_KEY: b!.keys[0]!.apiKey } });
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 'loja-b', status: 'active', merchantId: b!.merchantId });
    expectNoSecret(connected, secrets);

    const taken = await runCli(['tenants', 'connect', 'loja-a2'], { env: { ...env, INTEGRATION_API_KEY: a!.keys[0]!.apiKey } });
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already connected as tenant "loja-a".*allowSameMerchant/);

    const listed = await runCli(['tenants', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n').map((line) => JSON.parse(line).id)).toEqual(['loja-a', 'loja-b']);

    sandbox.revokeKey(a!.keys[0]!.apiKey);
    const doctor = await runCli(['doctor', '--json'], { env });
    expect(doctor.code).toBe(1);
    const checks = JSON.parse(doctor.stdout).checks as Array<{ check: string; status: string; detail: string }>;
    expect(checks.find((check) => check.check === 'tenant loja-a endpoint')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/loja-a.*401/) });
    expect(checks.find((check) => check.check === 'tenant loja-b endpoint')?.status).toBe('ok');
    expect(checks.find((check) => check.check === 'tenants')?.detail).toMatch(/2 active/);
    const again = await runCli(['doctor', '--json'], { env });
    expect(JSON.parse(again.stdout).checks.find((check: { check: string }) => check.check === 'tenant loja-a')).toMatchObject({ status: 'fail', detail: expect.stringMatching(/key refused \(401\) at .*tenants update-key loja-a/) });
    expectNoSecret(doctor, secrets);

    const invalid = await runCli(['tenants', 'list', '--status', 'key_invalid'], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^loja-a: key_invalid, .*key refused at /);

    const next = sandbox.addKey(a!.merchantId);
    const updated = await runCli(['tenants', 'update-key', 'loja-a'], { env: { ...env, INTEGRATION_API_KEY: next.apiKey } });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toMatch(/^Updated the key of loja-a: active/);
    expectNoSecret(updated, [next.apiKey]);
    // The tenant's endpoint moved to the new key (endpoints belong to the key that registered them).
    const moved = JSON.parse((await runCli(['tenants', 'list', '--json'], { env })).stdout.trim().split('\n')[0]!);
    const seen = await sandbox.handle(new Request(`${sandbox.url}/integration/v1/webhooks`, { headers: { 'x-api-key': next.apiKey } }));
    expect(((await seen.json()) as { data: Array<{ id: string }> }).data.map((endpoint) => endpoint.id)).toEqual([moved.endpointId]);

    const newKey = encryptionKey();
    const rekeyed = await runCli(['tenants', 'rekey'], { env: { ...env, INTEGRATION_TENANTS_KEY: newKey, INTEGRATION_TENANTS_PREVIOUS_KEYS: key } });
    expect(rekeyed.stdout).toMatch(/^Re-sealed 4 credential\(s\) under the current key; 0 already were/);
    const oldKey = await runCli(['tenants', 'list'], { env });
    expect(oldKey.code).toBe(2);
    expect(oldKey.stderr).toMatch(/encryptionKey does not open this tenants store/);

    const disconnected = await runCli(['tenants', 'disconnect', 'loja-b'], { env: { ...env, INTEGRATION_TENANTS_KEY: newKey } });
    expect(disconnected.code).toBe(0);
    const after = await runCli(['tenants', 'list', '--status', 'disconnected'], { env: { ...env, INTEGRATION_TENANTS_KEY: newKey } });
    expect(after.stdout).toMatch(/^loja-b: disconnected/);
  }, 60_000);

  it('disconnect checks the webhook URL before recording anything, and for a key_invalid tenant sends nothing and names the endpoint left', async () => {
    const sandbox = await startSandbox({ merchants: [{}, {}] });
    const [a, b] = sandbox.merchants;
    const env = { INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_TENANTS: `${dir.path}/disconnect.db`, INTEGRATION_TENANTS_KEY: encryptionKey() };
    const withUrl = { ...env, INTEGRATION_TENANTS_WEBHOOK_URL: 'https://erp.example.com/integration/{tenant}' };
    await runCli(['tenants', 'connect', 'loja-a'], { env: { ...withUrl, INTEGRATION_API_KEY: a!.keys[0]!.apiKey } });
    const b1 = JSON.parse((await runCli(['tenants', 'connect', 'loja-b', '--json'], { env: { ...withUrl, INTEGRATION_API_KEY: b!.keys[0]!.apiKey } })).stdout);

    // No webhook URL: refused before the disconnect is recorded; the tenant stays active, and a retry with the URL completes.
    const noUrl = await runCli(['tenants', 'disconnect', 'loja-a'], { env });
    expect(noUrl).toMatchObject({ code: 2, stderr: expect.stringMatching(/No webhook URL: pass --webhook-url/) });
    expect((await runCli(['tenants', 'list', '--status', 'active'], { env })).stdout).toMatch(/^loja-a: active/m);
    expect((await runCli(['tenants', 'disconnect', 'loja-a'], { env: withUrl })).stdout).toMatch(/^Disconnected loja-a: its endpoints were deleted and its credentials erased\./);

    // A revoked key: doctor meets the 401 (key_invalid); disconnect then needs no URL, sends nothing, names the endpoint.
    sandbox.revokeKey(b!.keys[0]!.apiKey);
    await runCli(['doctor'], { env: withUrl });
    const disconnected = await runCli(['tenants', 'disconnect', 'loja-b', '--json'], { env });
    expect(disconnected.code).toBe(0);
    expect(JSON.parse(disconnected.stdout)).toEqual({ id: 'loja-b', status: 'disconnected', endpointsLeft: [b1.endpointId] });
    const text = await runCli(['tenants', 'list', '--status', 'disconnected'], { env });
    expect(text.stdout).toMatch(/^loja-b: disconnected/m);
  }, 60_000);

  it.skipIf(skipRedis)('doctor --tenants shows the egress use of every process on the shared Redis, and without Redis says it cannot', async () => {
    const sandbox = await startSandbox({ merchants: [{}] });
    const server = await RedisServer.start();
    onCleanup(() => server.stop());
    const redis = await connectedClient(server.url);
    onCleanup(() => redis.close());
    const path = `${dir.path}/egress.db`;
    const key = encryptionKey();
    const env = { INTEGRATION_BASE_URL: sandbox.url, INTEGRATION_TENANTS: path, INTEGRATION_TENANTS_KEY: key, INTEGRATION_TENANTS_WEBHOOK_URL: 'https://erp.example.com/integration/{tenant}' };
    // Another process of the integration, on the shared Redis, sends 12 requests.
    const running = createTenants({ store: sqliteTenantStore({ path }), encryptionKey: key, baseUrl: sandbox.url, webhookUrl: (id) => `https://erp.example.com/integration/${id}`, redis, egress: { id: 'nat-a' } });
    onCleanup(() => running.close());
    await running.connect('loja-a', { apiKey: sandbox.merchants[0]!.keys[0]!.apiKey });
    for (let call = 0; call < 7; call++) await running.client('loja-a').health();

    const shared = await runCli(['doctor', '--json', '--max-tenants', '0', '--egress-id', 'nat-a'], { env: { ...env, INTEGRATION_REDIS_URL: server.url } });
    const egress = (JSON.parse(shared.stdout).checks as Array<{ check: string; detail: string }>).find((check) => check.check === 'egress budget')!;
    expect(egress.detail).toMatch(/^every process on the shared Redis, last minutes: /);
    const counted = [...egress.detail.matchAll(/ (\d+)\/min/g)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(counted).toBeGreaterThanOrEqual(12); // connect's 5 and the 7 calls (a minute may have turned meanwhile: summed)

    const alone = await runCli(['doctor', '--json', '--max-tenants', '0'], { env });
    const own = (JSON.parse(alone.stdout).checks as Array<{ check: string; detail: string }>).find((check) => check.check === 'egress budget')!;
    expect(own.detail).toMatch(/^use not shown: without Redis each process counts only its own requests; pass --redis <url>/);
  }, 60_000);

  it('never takes a key as an argument, and says what is missing', async () => {
    const env = { INTEGRATION_BASE_URL: 'http://127.0.0.1:9', INTEGRATION_TENANTS: `${dir.path}/none.db`, INTEGRATION_TENANTS_WEBHOOK_URL: 'https://erp.example.com/{tenant}' };
    const inArgv = await runCli(['tenants', 'connect', 'loja-1', 'service_abc_0123456789'], { env: { ...env, INTEGRATION_TENANTS_KEY: encryptionKey() } });
    expect(inArgv.code).toBe(2);
    expect(inArgv.stderr).toMatch(/never taken as an argument/);
    const noEncryption = await runCli(['tenants', 'connect', 'loja-1'], { env: { ...env, INTEGRATION_API_KEY: 'service_abc_0123456789' } });
    expect(noEncryption).toMatchObject({ code: 2, stderr: expect.stringMatching(/No encryption key: set INTEGRATION_TENANTS_KEY/) });
    const shortKey = await runCli(['tenants', 'connect', 'loja-1'], { env: { ...env, INTEGRATION_API_KEY: 'service_abc_0123456789', INTEGRATION_TENANTS_KEY: randomBytes(16).toString('base64') } });
    expect(shortKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/must be 32 bytes/) });
    const noKey = await runCli(['tenants', 'connect', 'loja-1'], { env: { ...env, INTEGRATION_TENANTS_KEY: encryptionKey() } });
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/No API key: set INTEGRATION_API_KEY/) });
    const badId = await runCli(['tenants', 'connect', 'loja 1'], { env: { ...env, INTEGRATION_API_KEY: 'service_abc_0123456789', INTEGRATION_TENANTS_KEY: encryptionKey() } });
    expect(badId).toMatchObject({ code: 2, stderr: expect.stringMatching(/tenantId: contains whitespace/) });
    const noStore = await runCli(['tenants', 'list'], { env: { ...env, INTEGRATION_TENANTS_KEY: encryptionKey() } });
    expect(noStore).toMatchObject({ code: 2, stderr: expect.stringMatching(/No tenants database at .*none\.db/) });
  }, 60_000);
});
