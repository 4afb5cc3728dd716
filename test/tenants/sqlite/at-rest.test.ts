// Credentials at rest in a real SQLite file: the file's bytes hold no key and no secret; a registry
// with another encryption key reads nothing and says so; a value copied onto another tenant does not
// open; rekey moves everything to the current key, after which only it opens the store.
import { DatabaseSync } from 'node:sqlite';
import { expect, it } from 'vitest';
import { ConfigurationError } from 'integration-sdk';
import { tenantsInternals } from '../../../src/tenants/create-tenants.ts';
import { rejectionOf } from '../../e2e/helpers.ts';
import { fileBytes, newEncryptionKey, startWorld } from '../support/fixture.ts';

it('the database file holds no key and no secret, in any encoding', async () => {
  const world = await startWorld();
  const tenants = world.tenants();
  const keys = world.sandbox.merchants.map((merchant) => merchant.keys[0]!.apiKey);
  for (const [index, apiKey] of keys.entries()) await tenants.connect(`loja-${index}`, { apiKey });
  const secrets = await Promise.all(keys.map(async (_key, index) => (await tenantsInternals(tenants)!.secretsFor(`loja-${index}`))![0]!.secret));
  const bytes = fileBytes(world.dbPath);
  expect(bytes.length).toBeGreaterThan(0);
  for (const value of [...keys, ...keys.map((key) => key.split('_')[2]!), ...secrets, ...secrets.map((secret) => secret.slice('whsec_'.length)), world.encryptionKey]) {
    for (const encoded of [value, Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')]) {
      expect(bytes.includes(Buffer.from(encoded))).toBe(false);
      expect(bytes.includes(Buffer.from(encoded, 'utf16le'))).toBe(false);
    }
  }
  // The merchant ids are there: the check would see plain text.
  expect(bytes.includes(Buffer.from(world.sandbox.merchants[0]!.merchantId))).toBe(true);
});

it('another encryption key reads nothing and says so; a key copied onto another tenant does not open', async () => {
  const world = await startWorld();
  const tenants = world.tenants();
  const [a, b] = world.sandbox.merchants;
  await tenants.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
  await tenants.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });

  const wrong = world.tenants({ encryptionKey: newEncryptionKey() });
  const refused = await rejectionOf(wrong.get('loja-a'));
  expect(refused).toBeInstanceOf(ConfigurationError);
  expect((refused as Error).message).toMatch(/encryptionKey does not open this tenants store: it was written with another encryption key .*nothing was read/);
  expect(await rejectionOf(wrong.client('loja-a').health())).toBeInstanceOf(ConfigurationError);
  const sent = world.proxy.requests.length;
  expect(await rejectionOf(wrong.connect('loja-c', { apiKey: world.sandbox.merchants[2]!.keys[0]!.apiKey }))).toBeInstanceOf(ConfigurationError);
  expect(world.proxy.requests.length).toBe(sent);

  const db = new DatabaseSync(world.dbPath);
  db.prepare("UPDATE tenants SET api_key = (SELECT api_key FROM tenants WHERE id = 'loja-a') WHERE id = 'loja-b'").run();
  db.close();
  const copied = await rejectionOf(world.tenants().client('loja-b').health());
  expect(copied).toBeInstanceOf(ConfigurationError);
  expect((copied as Error).message).toMatch(/loja-b.*does not open: it was altered or copied from another tenant/);
});

it('rekey with the previous key moves every credential to the current one; then only the current key opens the store', async () => {
  const world = await startWorld();
  const old = world.tenants();
  const [a, b] = world.sandbox.merchants;
  await old.connect('loja-a', { apiKey: a!.keys[0]!.apiKey });
  await old.connect('loja-b', { apiKey: b!.keys[0]!.apiKey });
  await old.close();

  const current = newEncryptionKey();
  const rotating = world.tenants({ encryptionKey: { current, previous: [world.encryptionKey] } });
  expect((await rotating.client('loja-a').health()).merchant_id).toBe(a!.merchantId);
  expect(await rotating.rekey()).toEqual({ resealed: 4, unchanged: 0 });
  expect(await rotating.rekey()).toEqual({ resealed: 0, unchanged: 4 });

  const after = world.tenants({ encryptionKey: current });
  expect((await after.client('loja-b').health()).merchant_id).toBe(b!.merchantId);
  expect((await tenantsInternals(after)!.secretsFor('loja-a'))![0]!.secret).toMatch(/^whsec_/);
  expect(await rejectionOf(world.tenants().get('loja-a'))).toBeInstanceOf(ConfigurationError);
});
