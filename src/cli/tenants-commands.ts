// `integration-sdk tenants connect|list|update-key|rotate-secret|disconnect|rekey` (docs/tenants.md). Prints
// records, never a key or a secret; keys come from the environment, a key file or a prompt.
import type { Command } from 'commander';
import { Option } from 'commander';
import { IntegrationError } from '../index.ts';
import type { Tenant, Tenants, TenantStatus } from '../tenants/index.ts';
import { failure, redact } from './failure.ts';
import { merchantKey, openTenants, TENANTS_STORE, type TenantsCommandOptions } from './tenants-config.ts';

const STATUSES: TenantStatus[] = ['connecting', 'active', 'key_invalid', 'disconnecting', 'disconnected'];

/** The tenants module's refusals say what to do in their own words; the rest as every command's. */
export function tenantsFailure(error: unknown): { message: string; code: number } {
  if (error instanceof IntegrationError && ['TenantConnectError', 'TenantNotFoundError', 'TenantKeyInvalidError', 'TenantRotationError'].includes(error.name)) {
    return { message: `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`, code: 1 };
  }
  return failure(error, TENANTS_STORE);
}

function describe(tenant: Tenant): string {
  const stores = tenant.storeIds.length === 0 ? 'all stores' : `stores ${tenant.storeIds.join(', ')}`;
  const missing = tenant.missingScopes.length === 0 ? '' : `; missing scopes ${tenant.missingScopes.join(', ')}`;
  const invalid = tenant.keyInvalidAt ? `; key refused at ${tenant.keyInvalidAt}` : '';
  return `${tenant.id}: ${tenant.status}, merchant ${tenant.merchantId}, ${stores}, endpoint ${tenant.endpointId ?? 'none'}${invalid}${missing}`;
}

async function withTenants(options: TenantsCommandOptions, create: boolean, body: (tenants: Tenants) => Promise<number>): Promise<number> {
  let tenants: Tenants | undefined;
  try {
    tenants = await openTenants(options, create);
    return await body(tenants);
  } catch (error) {
    const { message, code } = tenantsFailure(error);
    process.stderr.write(`${redact(message)}\n`);
    return code;
  } finally {
    await tenants?.close().catch(() => {});
  }
}

function print(json: boolean | undefined, value: unknown, text: string): void {
  console.log(redact(json ? JSON.stringify(value) : text));
}

type Run = <Args extends unknown[]>(action: (...args: Args) => Promise<number>) => (...args: Args) => Promise<void>;

export function registerTenantsCommands(group: (name: string, description: string, example: string) => Command, run: Run): void {
  const tenants = group(
    'tenants',
    'merchants of a multi-merchant integration: connect | list | update-key | rotate-secret | disconnect | rekey',
    'INTEGRATION_TENANTS_KEY=... INTEGRATION_API_KEY=... integration-sdk tenants connect loja-42 --tenants ./integration.db --webhook-url https://erp.example.com/webhooks/integration/{tenant}',
  );
  const withStore = (command: Command) =>
    command
      .option('--tenants <location>', 'tenants store: a SQLite file or a Postgres URL (default: INTEGRATION_TENANTS)')
      .option('--redis <url>', "the Redis the tenants' processes share, to draw from their egress budget (default: INTEGRATION_REDIS_URL)")
      .option('--egress-id <id>', 'the egress budget these processes share (createTenants egress.id; default: INTEGRATION_EGRESS_ID, else "default")')
      .option('--json', 'print JSON');
  const webhookUrlOption = (command: Command, when: string) =>
    command.option('--webhook-url <template>', `receiver URL with {tenant} for the id${when} (default: INTEGRATION_TENANTS_WEBHOOK_URL)`);
  const options = (command: Command) => command.optsWithGlobals<TenantsCommandOptions & { json?: boolean }>();

  webhookUrlOption(withStore(tenants.command('connect')), '')
    .description("connect a merchant: check its key (INTEGRATION_API_KEY, --api-key-file or typed), register its endpoint, keep its secret sealed")
    .argument('<id>', 'your id for the merchant: letters, digits, -, ., _ and ~ (the last segment of its webhook URL)')
    .option('--allow-same-merchant', 'allow a second tenant id for a merchant already connected (a test-store key)')
    .addHelpText('after', '\nExample:\n  INTEGRATION_API_KEY=... integration-sdk tenants connect loja-42 --tenants ./integration.db --webhook-url https://erp.example.com/webhooks/integration/{tenant}')
    .action(run(async (id: string, _local: unknown, command: Command) => {
      const opts = options(command) as TenantsCommandOptions & { json?: boolean; allowSameMerchant?: boolean };
      return withTenants(opts, true, async (registry) => {
        const apiKey = await merchantKey(opts);
        const tenant = await registry.connect(id, { apiKey, allowSameMerchant: opts.allowSameMerchant === true });
        print(opts.json, tenant, `Connected ${describe(tenant)}.`);
        return 0;
      });
    }));

  withStore(tenants.command('list'))
    .description('list the tenants (every status but disconnected unless --status), in id order')
    .addOption(new Option('--status <status...>', 'only these statuses').choices(STATUSES))
    .addHelpText('after', '\nExit 1 when a listed tenant is key_invalid.\nExample:\n  integration-sdk tenants list --status key_invalid --tenants ./integration.db')
    .action(run(async (_local: unknown, command: Command) => {
      const opts = options(command) as TenantsCommandOptions & { json?: boolean; status?: TenantStatus[] };
      return withTenants(opts, false, async (registry) => {
        let invalid = false;
        let count = 0;
        for await (const tenant of registry.list(opts.status ? { status: opts.status } : {})) {
          count++;
          invalid ||= tenant.status === 'key_invalid';
          print(opts.json, tenant, describe(tenant));
        }
        if (count === 0 && !opts.json) console.log('(no tenants)');
        return invalid ? 1 : 0;
      });
    }));

  webhookUrlOption(withStore(tenants.command('update-key')), ': the endpoint moves to the new key')
    .description("replace a tenant's key with the merchant's new one (INTEGRATION_API_KEY, --api-key-file or typed): its endpoint is registered under the new key, the old key's deleted; clears key_invalid")
    .argument('<id>')
    .addHelpText('after', '\nExample:\n  INTEGRATION_API_KEY=... integration-sdk tenants update-key loja-42 --tenants ./integration.db --webhook-url https://erp.example.com/webhooks/integration/{tenant}')
    .action(run(async (id: string, _local: unknown, command: Command) => {
      const opts = options(command);
      return withTenants(opts, false, async (registry) => {
        const tenant = await registry.updateKey(id, await merchantKey(opts));
        print(opts.json, tenant, `Updated the key of ${describe(tenant)}.`);
        return 0;
      });
    }));

  webhookUrlOption(withStore(tenants.command('rotate-secret')), ', used only when its old endpoint is gone')
    .description("replace a tenant's webhook secret: a second endpoint at its URL, a test delivery verified with the new secret, then the old endpoint deleted")
    .argument('<id>')
    .addHelpText(
      'after',
      '\nWaits up to 60 s for the receiver to verify a test delivery with the new secret. Exit 1 when it did not (both endpoints stay: run it again to finish) or no endpoint slot is free.\n' +
        'Example:\n  integration-sdk tenants rotate-secret loja-42 --tenants ./integration.db',
    )
    .action(run(async (id: string, _local: unknown, command: Command) => {
      const opts = options(command);
      return withTenants(opts, false, async (registry) => {
        const tenant = await registry.rotateWebhookSecret(id);
        print(opts.json, tenant, `Rotated the webhook secret of ${tenant.id}: deliveries come from endpoint ${tenant.endpointId} only; the old endpoint and its secret are gone.`);
        return 0;
      });
    }));

  webhookUrlOption(withStore(tenants.command('disconnect')), '')
    .description("delete a tenant's endpoints and erase its credentials (the record stays, disconnected)")
    .argument('<id>')
    .addHelpText(
      'after',
      '\nThe webhook URL is checked before anything is recorded. A tenant whose key was refused (key_invalid) sends nothing: its credentials are erased and the endpoints its revoked key took out of service are named.\n' +
        'Example:\n  integration-sdk tenants disconnect loja-42 --tenants ./integration.db --webhook-url https://erp.example.com/webhooks/integration/{tenant}',
    )
    .action(run(async (id: string, _local: unknown, command: Command) => {
      const opts = options(command);
      return withTenants(opts, false, async (registry) => {
        const { tenant, endpointsLeft } = await registry.disconnect(id);
        const left =
          endpointsLeft.length === 0
            ? 'its endpoints were deleted and its credentials erased'
            : `its credentials were erased; its key was refused (401), so endpoint(s) ${endpointsLeft.join(', ')} could not be deleted: the revoked key took them out of service (if the platform still lists them, delete them with a valid key of the merchant)`;
        print(opts.json, { id, status: tenant.status, endpointsLeft }, `Disconnected ${id}: ${left}.`);
        return 0;
      });
    }));

  withStore(tenants.command('rekey'))
    .description('re-seal every credential under INTEGRATION_TENANTS_KEY (old keys in INTEGRATION_TENANTS_PREVIOUS_KEYS, comma-separated)')
    .addHelpText('after', '\nExample:\n  INTEGRATION_TENANTS_KEY=<new> INTEGRATION_TENANTS_PREVIOUS_KEYS=<old> integration-sdk tenants rekey --tenants ./integration.db')
    .action(run(async (_local: unknown, command: Command) => {
      const opts = options(command);
      return withTenants(opts, false, async (registry) => {
        const result = await registry.rekey();
        print(opts.json, result, `Re-sealed ${result.resealed} credential(s) under the current key; ${result.unchanged} already were. Old keys can now be dropped.`);
        return 0;
      });
    }));
}
