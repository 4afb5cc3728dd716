import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { createWebhookHandler, signWebhook, verifyWebhook, verifyWebhookAsync } from 'integration-sdk/webhooks';
import { IntegrationError } from '../../src/errors/integration-error.ts';
import { NOW, SECRET, delivery } from './support/deliveries.ts';

const sourceDir = fileURLToPath(new URL('../../src/webhooks/', import.meta.url));
const sources = readdirSync(sourceDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => [file, readFileSync(`${sourceDir}${file}`, 'utf8')] as const);

const runtimeProcess = globalThis.process as { getBuiltinModule?: unknown };
const getBuiltinModule = runtimeProcess.getBuiltinModule;
afterEach(() => {
  runtimeProcess.getBuiltinModule = getBuiltinModule;
});

test('no file of the webhooks entry imports node:*, Buffer, a barrel or the HTTP client', () => {
  expect(sources.length).toBeGreaterThan(5);
  for (const [file, source] of sources) {
    const imports = [...source.matchAll(/(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'|require\(\s*'([^']+)'/g)].map(
      (match) => match[1] ?? match[2] ?? match[3],
    );
    for (const specifier of imports) {
      expect(specifier, file).not.toMatch(/^node:|^(buffer|crypto|http|stream)$|^ky$|^p-(retry|throttle)$|transport|\/index\.ts$/);
      if (specifier?.startsWith('zod')) expect(specifier, file).toBe('zod/mini');
    }
    expect(source, file).not.toMatch(/\bBuffer\s*[.(]/);
  }
});

test('without process.getBuiltinModule the sync helpers say to use verifyWebhookAsync; the async ones work', async () => {
  const { body, headers } = delivery();
  runtimeProcess.getBuiltinModule = undefined;
  expect(() => verifyWebhook(body, headers, SECRET, { now: NOW })).toThrow(IntegrationError);
  expect(() => verifyWebhook(body, headers, SECRET, { now: NOW })).toThrow(/verifyWebhook needs node:crypto.*use verifyWebhookAsync/);
  expect(() => signWebhook({ payload: { event: 'webhook.test', data: {} }, secret: SECRET })).toThrow(/signWebhook needs node:crypto/);
  expect((await verifyWebhookAsync(body, headers, SECRET, { now: NOW })).event).toBe('order.created');
  const handler = createWebhookHandler({ secret: SECRET, now: NOW, onEvent: () => undefined });
  expect((await handler(new Request('http://localhost/', { method: 'POST', headers, body }))).status).toBe(200);
});
