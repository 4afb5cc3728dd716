// `integration-sdk webhooks rotate` and `tenants rotate-secret`, run as real processes against the
// sandbox. The receiver verifies every delivery with the secrets it was given and refuses the rest,
// so a rotation finishes only once "the user" added the printed secret beside the old one.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { IntegrationClient } from 'integration-sdk';
import { verifyWebhook } from 'integration-sdk/webhooks';
import { tempDir } from '../inbox/support/temp-dir.ts';
import { startReceiver, startSandbox } from '../e2e/helpers.ts';
import { runCli } from './helpers.ts';

const dir = tempDir('cli-rotate');
afterAll(() => dir.remove());

/** A receiver that answers 200 to a delivery one of `secrets` verifies, 400 to any other; and what verified each. */
async function verifyingReceiver(secrets: string[]) {
  const verified: { event: string; secret: string }[] = [];
  const receiver = await startReceiver((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const secret = secrets.find((candidate) => {
        try {
          verifyWebhook(body, req.headers as Record<string, string>, candidate);
          return true;
        } catch {
          return false;
        }
      });
      if (secret) verified.push({ event: String(req.headers['x-service-event']), secret });
      res.writeHead(secret ? 200 : 400).end();
    });
  });
  return { url: receiver.url, verified };
}

const SECRET_LINE = /^Secret: (whsec_\S+)$/m;

describe('integration-sdk webhooks rotate', { timeout: 60_000 }, () => {
  it('prints the new secret once, waits until the receiver accepts it, then deletes the old endpoint', async () => {
    const sandbox = await startSandbox({ timeScale: 0.01 });
    const env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url };
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const secrets: string[] = [];
    const receiver = await verifyingReceiver(secrets);
    const old = await client.webhooks.create({ url: `${receiver.url}/hooks`, events: ['order.created', 'order.status_changed'] });
    secrets.push(old.secret);

    let printed = '';
    const result = await runCli(['webhooks', 'rotate', '--endpoint', old.id], {
      env,
      onStart: (child) =>
        child.stdout!.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
          // The user reads the secret and gives it to the receiver, beside the old one.
          const secret = SECRET_LINE.exec(printed)?.[1];
          if (secret && !secrets.includes(secret)) secrets.push(secret);
        }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const newSecret = SECRET_LINE.exec(result.stdout)![1]!;
    expect(result.stdout.split(newSecret)).toHaveLength(2); // printed once
    const [endpoint] = await client.webhooks.list();
    expect(await client.webhooks.list()).toHaveLength(1);
    expect(endpoint!.id).not.toBe(old.id);
    expect(endpoint).toMatchObject({ url: old.url, events: old.events });
    expect(result.stdout).toContain(`Registered endpoint ${endpoint!.id} beside ${old.id}`);
    expect(result.stdout).toContain(`integration-sdk webhooks rotate --endpoint ${old.id} --resume ${endpoint!.id}`);
    expect(result.stdout).toMatch(new RegExp(`Deleted the old endpoint ${old.id}: deliveries come from ${endpoint!.id} only`));
    // The test delivery was verified with the new secret; orders now arrive signed with it alone.
    expect(receiver.verified).toContainEqual({ event: 'webhook.test', secret: newSecret });
    sandbox.createOrder();
    await sandbox.idle();
    expect(receiver.verified.at(-1)).toEqual({ event: 'order.created', secret: newSecret });
  });

  it('keeps both endpoints when the receiver does not accept the secret in time; --resume finishes, and says so when already done', async () => {
    const sandbox = await startSandbox({ timeScale: 0.01 });
    const env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url };
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const secrets: string[] = [];
    const receiver = await verifyingReceiver(secrets);
    const old = await client.webhooks.create({ url: `${receiver.url}/hooks`, events: ['order.created'] });
    secrets.push(old.secret);

    const late = await runCli(['webhooks', 'rotate', '--endpoint', old.id, '--wait', '2', '--json'], { env });
    expect(late.code).toBe(1);
    const [registered] = late.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(registered).toMatchObject({ step: 'registered', old_endpoint_id: old.id, secret: expect.stringMatching(/^whsec_/), warning: expect.any(String) });
    const newId = registered.endpoint.id as string;
    expect(late.stderr).toMatch(/did not accept a delivery signed with the new secret within 2 s: the last test delivery is retrying \(answer 400/);
    expect(late.stderr).toContain(`run: integration-sdk webhooks rotate --endpoint ${old.id} --resume ${newId}`);
    expect(late.stderr).not.toContain(registered.secret);
    expect((await client.webhooks.list()).map((endpoint) => endpoint.id).sort()).toEqual([old.id, newId].sort());

    // A second run without --resume adds no third endpoint.
    const again = await runCli(['webhooks', 'rotate', '--endpoint', old.id], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`Another endpoint is already at .*: ${newId} \\(an interrupted rotation\\?\\).*--resume ${newId}.*Nothing was changed`));
    expect(await client.webhooks.list()).toHaveLength(2);

    secrets.push(registered.secret);
    const resumed = await runCli(['webhooks', 'rotate', '--endpoint', old.id, '--resume', newId], { env });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).not.toMatch(SECRET_LINE);
    expect((await client.webhooks.list()).map((endpoint) => endpoint.id)).toEqual([newId]);

    const done = await runCli(['webhooks', 'rotate', '--endpoint', old.id, '--resume', newId], { env });
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`The old endpoint ${old.id} is already deleted: the rotation is over`));
  });

  it('names the endpoints holding the five slots and changes nothing', async () => {
    const sandbox = await startSandbox();
    const env = { INTEGRATION_API_KEY: sandbox.apiKey, INTEGRATION_BASE_URL: sandbox.url };
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    const receiver = await verifyingReceiver([]);
    const endpoints = [];
    for (let n = 0; n < 5; n++) endpoints.push(await client.webhooks.create({ url: `${receiver.url}/hooks/${n}?token=s3cr3t`, events: ['order.created'] }));
    const full = await runCli(['webhooks', 'rotate', '--endpoint', endpoints[0]!.id], { env });
    expect(full.code).toBe(1);
    expect(full.stdout).toBe('');
    for (const endpoint of endpoints) expect(full.stderr).toContain(`${endpoint.id} (${receiver.url}/hooks/${endpoints.indexOf(endpoint)})`);
    expect(full.stderr).not.toContain('s3cr3t');
    expect(await client.webhooks.list()).toHaveLength(5);
  });
});

describe('integration-sdk tenants rotate-secret', { timeout: 60_000 }, () => {
  it("rotates a connected tenant's secret without printing one; a full integration is refused naming its endpoints", async () => {
    const sandbox = await startSandbox({ merchants: [{}] });
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    const [merchant] = sandbox.merchants;
    const apiKey = merchant!.keys[0]!.apiKey;
    const env = {
      INTEGRATION_BASE_URL: sandbox.url,
      INTEGRATION_TENANTS: `${dir.path}/tenants.db`,
      INTEGRATION_TENANTS_KEY: randomBytes(32).toString('base64'),
      INTEGRATION_TENANTS_WEBHOOK_URL: `${receiver.url}/integration/{tenant}`,
    };
    const connected = JSON.parse((await runCli(['tenants', 'connect', 'loja-a', '--json'], { env: { ...env, INTEGRATION_API_KEY: apiKey } })).stdout);

    const rotated = await runCli(['tenants', 'rotate-secret', 'loja-a'], { env });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const client = new IntegrationClient({ apiKey, baseUrl: sandbox.url });
    const [endpoint] = await client.webhooks.list();
    expect(await client.webhooks.list()).toHaveLength(1);
    expect(endpoint!.id).not.toBe(connected.endpointId);
    expect(rotated.stdout).toBe(`Rotated the webhook secret of loja-a: deliveries come from endpoint ${endpoint!.id} only; the old endpoint and its secret are gone.\n`);

    for (let n = 0; n < 4; n++) await client.webhooks.create({ url: `${receiver.url}/other/${n}`, events: ['order.created'] });
    const full = await runCli(['tenants', 'rotate-secret', 'loja-a', '--json'], { env });
    expect(full.code).toBe(1);
    expect(full.stdout).toBe('');
    expect(full.stderr).toMatch(/^Tenant "loja-a": a rotation registers a second endpoint beside .* already has 5 webhook endpoints: .*delete one that is not in use/);
    expect(full.stderr).not.toMatch(/whsec_/);
  });
});
