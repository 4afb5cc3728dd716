// The README's "Receiving webhooks" samples are run, not only compiled: each block is written out
// as a module, imported, and sent a genuine and a tampered delivery.
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from 'integration-sdk/webhooks';

const root = resolve(import.meta.dirname, '../..');
const workDir = join(root, '.tmp', 'readme-webhooks');
const SECRET = 'whsec_readme_sample_secret';

function webhookSamples(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Receiving webhooks');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** Writes a sample as a module that also exports `names`, and imports it. */
async function load(code: string, name: string, names: string[]): Promise<Record<string, unknown>> {
  const path = join(workDir, `${name}.ts`);
  writeFileSync(path, `${code}\nexport { ${names.join(', ')} };\n`);
  return import(path);
}

function delivery(tamper = false) {
  const signed = signWebhook({
    payload: { event: 'order.status_changed', data: { order_id: 'o-1', display_number: '1001', external_order_id: null, previous_status: 'confirmed', status: 'preparing', store_id: 's-1' } },
    secret: SECRET,
  });
  return { body: tamper ? signed.body.replace('preparing', 'cancelled') : signed.body, headers: signed.headers as unknown as Record<string, string> };
}

const persisted: unknown[] = [];
let samples: string[];

beforeAll(() => {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  process.env.WEBHOOK_SECRET = SECRET;
  // The Express sample declares `persist` as the user's own storage.
  (globalThis as { persist?: (event: unknown) => Promise<void> }).persist = async (event) => void persisted.push(event);
  samples = webhookSamples();
});

afterAll(() => {
  delete (globalThis as { persist?: unknown }).persist;
});

describe("the README's webhook receivers", () => {
  it('has the two samples this test runs', () => {
    expect(samples).toHaveLength(2);
  });

  it('createWebhookHandler sample: 2xx for a genuine delivery, 400 for a tampered one', async () => {
    const { handler } = await load(samples[0]!, 'handler', ['handler']);
    const fetchHandler = handler as (request: Request) => Promise<Response>;
    const send = async (tamper: boolean) => {
      const { body, headers } = delivery(tamper);
      return (await fetchHandler(new Request('http://localhost/webhooks', { method: 'POST', body, headers }))).status;
    };
    expect(await send(false)).toBeLessThan(300);
    expect(await send(true)).toBe(400);
  });

  it('Express sample: 204 after persisting a genuine delivery, 400 and nothing persisted for a tampered one', async () => {
    const { app } = await load(samples[1]!, 'express', ['app']);
    const server = (app as { listen: (port: number, host: string) => Server }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    try {
      const tampered = delivery(true);
      const refused = await fetch(url, { method: 'POST', body: tampered.body, headers: tampered.headers });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toBe('signature_mismatch');
      expect(persisted).toHaveLength(0);

      const genuine = delivery();
      const accepted = await fetch(url, { method: 'POST', body: genuine.body, headers: genuine.headers });
      expect(accepted.status).toBe(204);
      expect(persisted).toMatchObject([{ event: 'order.status_changed', data: { status: 'preparing' } }]);
    } finally {
      server.close();
    }
  });
});
