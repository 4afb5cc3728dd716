#!/usr/bin/env bash
# Installs the packed tarball into a scratch project, as a user would, and imports and requires
# every entry on each Node given: the ESM and CommonJS builds must both load, share one class per
# error, and talk to the sandbox.
set -euo pipefail
tarball=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
tsc="$root/node_modules/.bin/tsc"
typeRoots="$root/node_modules/@types"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund "$tarball"

cat > esm.mjs <<'JS'
import assert from 'node:assert/strict';
import { IntegrationClient, WebhookVerificationError, IntegrationError, verifyWebhook as mainVerify } from 'integration-sdk';
import { verifyWebhook, signWebhook, WebhookVerificationError as FromWebhooks } from 'integration-sdk/webhooks';
import { createSandbox } from 'integration-sdk/sandbox';

assert.equal(FromWebhooks, WebhookVerificationError, 'one WebhookVerificationError class across entries');
assert.equal(mainVerify, verifyWebhook);
const secret = 'whsec_smoke';
const { body, headers } = signWebhook({ payload: { event: 'webhook.test', data: { webhook_id: 'w', message: 'hi' } }, secret });
assert.equal(verifyWebhook(body, headers, secret).event, 'webhook.test');
try {
  verifyWebhook(body, headers, 'whsec_other');
  assert.fail('expected a mismatch');
} catch (error) {
  assert.ok(error instanceof WebhookVerificationError && error instanceof IntegrationError);
}
const sandbox = await createSandbox();
try {
  const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
  assert.equal((await client.health()).status, 'ok');
} finally {
  await sandbox.close();
}
console.log(`esm ok on node ${process.versions.node}`);
JS

cat > cjs.cjs <<'JS'
const assert = require('node:assert/strict');
const { IntegrationClient, WebhookVerificationError, ConfigurationError } = require('integration-sdk');
const webhooks = require('integration-sdk/webhooks');
const { createSandbox } = require('integration-sdk/sandbox');

assert.equal(webhooks.WebhookVerificationError, WebhookVerificationError, 'one class across CommonJS entries');
assert.throws(() => new IntegrationClient({ apiKey: 'nope', baseUrl: 'https://x.example' }), ConfigurationError);
(async () => {
  const sandbox = await createSandbox();
  try {
    const client = new IntegrationClient({ apiKey: sandbox.apiKey, baseUrl: sandbox.url });
    assert.equal((await client.health()).status, 'ok');
  } finally {
    await sandbox.close();
  }
  console.log(`cjs ok on node ${process.versions.node}`);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
JS

# Every entry of the installed package's own exports, as `integration-sdk/<subpath>`.
specifiers=$(node -e '
  const { name, exports } = require("./node_modules/integration-sdk/package.json");
  for (const subpath of Object.keys(exports)) if (subpath !== "./package.json") console.log(subpath === "." ? name : `${name}/${subpath.slice(2)}`);
')
imports() { # $1 = "type" for type-only imports
  local i=0
  for specifier in $specifiers; do
    echo "import ${1:+type }* as entry$i from '$specifier';"
    echo "export type Entry$i = typeof entry$i;"
    i=$((i + 1))
  done
}

# A strict ESM TypeScript project, as `tsc --init` and "type": "module" make it: every entry must
# come with its declarations (no TS7016 "could not find a declaration file"), whatever build of
# dist/ ran before packing.
npm pkg set type=module >/dev/null
{
  imports type
  cat <<'TS'
import { IntegrationClient } from 'integration-sdk';
import { verifyWebhook, type WebhookEvent } from 'integration-sdk/webhooks';
export async function check(client: IntegrationClient, body: string, headers: Headers, secret: string): Promise<[string, WebhookEvent]> {
  return [(await client.health()).status, verifyWebhook(body, headers, secret)];
}
TS
} > strict.ts
"$tsc" --noEmit --strict --skipLibCheck --module nodenext --moduleResolution nodenext --target es2022 --lib es2023,dom --types node --typeRoots "$typeRoots" strict.ts
echo "types resolve in a strict nodenext project: $(echo $specifiers | wc -w) entries"
npm pkg delete type >/dev/null

# TypeScript users on the old `moduleResolution: node` (node10) ignore `exports`: the subpath
# entries must still resolve, through `typesVersions`.
imports type > node10.ts
"$tsc" --ignoreDeprecations 6.0 --noEmit --strict --skipLibCheck --module commonjs --moduleResolution node --target es2022 --lib es2023,dom --types node --typeRoots "$typeRoots" node10.ts
echo "types resolve under moduleResolution node"

for bin in "$@"; do
  "$bin/node" esm.mjs
  "$bin/node" cjs.cjs
done
