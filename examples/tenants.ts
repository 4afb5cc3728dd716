// A point-of-sale vendor with many merchants: each merchant pastes its key once (connect: its
// endpoint is registered and its secret kept, both sealed in the database), then the vendor works
// every merchant through one registry whose clients share one egress budget. A merchant that
// revokes its key is found at its next call (key_invalid, nothing more is sent with that key) and
// is back once it sends a new one.
//
//   node examples/tenants.ts                       (a local sandbox with three merchants)
//   TENANTS_KEY=$(openssl rand -base64 32) INTEGRATION_BASE_URL=https://platform.example.com \
//     MERCHANT_KEYS=loja-1=service_...,loja-2=service_... \
//     WEBHOOK_URL='https://erp.example.com/webhooks/integration/{tenant}' node examples/tenants.ts
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createSandbox, type Sandbox } from 'integration-sdk/sandbox';
import { createTenants, TenantKeyInvalidError } from 'integration-sdk/tenants';
import { sqliteTenantStore } from 'integration-sdk/tenants/sqlite';

const { values } = parseArgs({ options: { db: { type: 'string', default: './integration-tenants.db' } } });

// Against the sandbox unless a platform is named: three merchants, and a receiver for their test deliveries.
let sandbox: Sandbox | undefined;
let receiver: ReturnType<typeof createServer> | undefined;
let merchantKeys: Array<[string, string]>;
let webhookTemplate: string;
if (process.env.INTEGRATION_BASE_URL) {
  merchantKeys = (process.env.MERCHANT_KEYS ?? '').split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]);
  webhookTemplate = process.env.WEBHOOK_URL ?? '';
} else {
  sandbox = await createSandbox({ merchants: [{}, {}, {}] });
  receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  merchantKeys = sandbox.merchants.map((merchant, i) => [`loja-${i + 1}`, merchant.keys[0]!.apiKey]);
  webhookTemplate = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/integration/{tenant}`;
}

const tenants = createTenants({
  store: sqliteTenantStore({ path: values.db }),
  // 32 random bytes, kept outside the database (a secret manager, an environment variable).
  encryptionKey: process.env.TENANTS_KEY ?? randomBytes(32).toString('base64'),
  baseUrl: process.env.INTEGRATION_BASE_URL ?? sandbox!.url,
  webhookUrl: (id) => webhookTemplate.replace('{tenant}', id),
});

try {
  // Onboarding: each merchant's pasted key. A second run finds each endpoint and reuses it.
  for (const [id, apiKey] of merchantKeys) {
    const tenant = await tenants.connect(id, { apiKey });
    console.log(`connected ${tenant.id}: merchant ${tenant.merchantId}, endpoint ${tenant.endpointId}${tenant.missingScopes.length ? `, missing ${tenant.missingScopes.join(' ')}` : ''}`);
  }

  // Nightly: the same product for every merchant, each through its own key and the shared budget.
  for await (const tenant of tenants.list({ status: 'active' })) {
    const result = await tenants.client(tenant.id).catalog.upsertProducts([{ external_id: 'SKU-1001', name: 'Café torrado 500 g', price: 24.9 }]);
    console.log(`${tenant.id}: catalog ${JSON.stringify(result.summary)}`);
  }

  if (sandbox) {
    // A merchant revokes its key: its next call fails at once, and nothing more is sent with it.
    sandbox.revokeKey(merchantKeys[1]![1]);
    try {
      await tenants.client('loja-2').health();
    } catch (error) {
      if (!(error instanceof TenantKeyInvalidError)) throw error;
      console.log(`${error.tenantId}: key refused at ${error.keyInvalidAt}; asking the merchant for a new one`);
    }
    for await (const tenant of tenants.list({ status: 'key_invalid' })) console.log(`key_invalid: ${tenant.id}`);
    const fresh = sandbox.addKey(sandbox.merchants[1]!.merchantId);
    await tenants.updateKey('loja-2', fresh.apiKey);
    console.log(`loja-2: ${(await tenants.get('loja-2'))?.status} again, health ${(await tenants.client('loja-2').health()).status}`);
  }
} finally {
  await tenants.close();
  await sandbox?.close();
  receiver?.close();
}
