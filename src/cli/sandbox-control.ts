// `integration-sdk sandbox order create | order status | deliver`: make things happen in a running
// sandbox from another terminal, as `stripe trigger` does, through its `/_sandbox` controls (not
// part of the Integration API). They send the sandbox's own full key, never INTEGRATION_API_KEY,
// which may be a production key.
import type { Command } from 'commander';
import { ORDER_STATUSES } from '../schemas/order.ts';
import { apiKeyOf, STORES } from '../sandbox/seed.ts';
import { UsageError } from './config.ts';
import { duration, noAnswer } from './sandbox-format.ts';

/** index.ts's wrapper: the action's number is the exit code (-1 keeps the process running). */
export type Runner = <Args extends unknown[]>(action: (...args: Args) => Promise<number>) => (...args: Args) => Promise<void>;

const DEFAULT_URL = 'http://127.0.0.1:4010';

interface DeliveryLine {
  id: string;
  url: string;
}

interface OrderAnswer {
  order: { order_id: string; display_number: string; store_id: string; status: string; totals: { total: number }; items: Array<{ external_id: string; quantity: number }> };
  previous_status?: string;
  deliveries: DeliveryLine[];
}

interface DeliverAnswer {
  delivery: { id: string; event: string; status: string; attempt_count: number; response_status: number | null; last_error: string | null; next_attempt_at: string | null };
  order_id: string | null;
  webhook: { id: string; url: string; events: string[]; secret: string; registered: boolean };
  /** The endpoint an earlier `deliver` registered for another URL, deleted to make room. */
  replaced: { id: string; url: string } | null;
}

export function defineControlCommands(sandbox: Command, run: Runner): void {
  const order = sandbox
    .command('order')
    .description('play the platform in a running sandbox: order create | order status')
    .addHelpText('after', '\nExample:\n  integration-sdk sandbox order create');
  order
    .command('create')
    .description('create a test order; the sandbox emits order.created to every subscribed endpoint')
    .option('--store <id>', `store id (default: ${STORES[0].id}, ${STORES[0].name})`)
    .option('--json', 'print the answer as JSON')
    .addHelpText('after', `\nTalks to INTEGRATION_BASE_URL or --base-url (default ${DEFAULT_URL}).\nExample:\n  integration-sdk sandbox order create --store ${STORES[1].id}`)
    .action(act(run, async (options: { store?: string; json?: boolean }, command: Command) => {
      const answer = await control<OrderAnswer>(command, '/orders', options.store === undefined ? {} : { store_id: options.store });
      return show(answer, options.json, () => describeOrder(answer, 'order.created'), 0);
    }));
  order
    .command('status')
    .description('change an order\'s status; the sandbox emits order.status_changed')
    .argument('<order_id>', 'the order_id printed by order create')
    .argument('<status>', ORDER_STATUSES.join(' | '))
    .option('--json', 'print the answer as JSON')
    .addHelpText('after', '\nExample:\n  integration-sdk sandbox order status 0b7e5d52-3f0e-4a8e-9a55-6f1c2d3e4f50 dispatched')
    .action(act(run, async (orderId: string, status: string, options: { json?: boolean }, command: Command) => {
      const answer = await control<OrderAnswer>(command, `/orders/${encodeURIComponent(orderId)}/status`, { status });
      return show(answer, options.json, () => describeOrder(answer, 'order.status_changed'), 0);
    }));
  sandbox
    .command('deliver')
    .description('send one signed delivery to a URL (registering an endpoint for it if needed) and print the secret')
    .requiredOption('--url <url>', 'the receiver, e.g. http://127.0.0.1:3000/webhooks')
    .option('--event <event>', 'order.created (a new test order) or webhook.test', 'order.created')
    .option('--store <id>', 'store of the new order (order.created)')
    .option('--json', 'print the answer as JSON')
    .addHelpText('after', `
Uses the endpoint registered for that URL, or registers one (order.created and
order.status_changed, under the sandbox's full key), then waits for attempt 1.
deliver keeps one endpoint of its own: a new URL replaces the one it registered
before, so runs against receivers on new ports never fill the key's five.
Exit 1 when attempt 1 failed (the sandbox keeps retrying on its schedule).
Example:
  integration-sdk sandbox deliver --url http://127.0.0.1:3000/webhooks --event order.created`)
    .action(act(run, async (options: { url: string; event: string; store?: string; json?: boolean }, command: Command) => {
      const answer = await control<DeliverAnswer>(command, '/deliveries', { url: options.url, event: options.event, ...(options.store === undefined ? {} : { store_id: options.store }) });
      return show(answer, options.json, () => describeDelivery(answer), answer.delivery.status === 'delivered' ? 0 : 1);
    }));
}

/** Prints the answer (as JSON with --json) and returns the exit code. */
function show(answer: unknown, json: boolean | undefined, describe: () => string, exitCode: number): number {
  console.log(json ? JSON.stringify(answer) : describe());
  return exitCode;
}

/** The sandbox's origin: `--base-url`, `INTEGRATION_BASE_URL` or the CLI's default port. */
export function sandboxOrigin(baseUrl: string | undefined): string {
  const raw = (baseUrl ?? process.env.INTEGRATION_BASE_URL ?? DEFAULT_URL).trim().replace(/\/+$/, '');
  return raw.replace(/\/integration\/v1$/, '');
}

/** The sandbox refused a control: one sentence on stderr, exit 1 (not found, a sandbox failure) or 2 (bad arguments). */
class ControlError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** `run`, with a refused control printed as one sentence instead of thrown. */
function act<Args extends unknown[]>(run: Runner, action: (...args: Args) => Promise<number>): (...args: Args) => Promise<void> {
  return run(async (...args: Args) => {
    try {
      return await action(...args);
    } catch (error) {
      if (!(error instanceof ControlError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
  });
}

async function control<T>(command: Command, path: string, body: unknown): Promise<T> {
  const origin = sandboxOrigin(command.optsWithGlobals<{ baseUrl?: string }>().baseUrl);
  let response: Response;
  try {
    response = await fetch(`${origin}/_sandbox${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKeyOf('full') },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
  } catch {
    throw new UsageError(`No sandbox answers at ${origin}: start one (integration-sdk sandbox) or set --base-url.`);
  }
  const text = await response.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new UsageError(`${origin} did not answer as an integration-sdk sandbox (HTTP ${response.status}): check --base-url (INTEGRATION_BASE_URL).`);
  }
  if (response.ok) return answer as T;
  const error = (answer as { error?: { code?: string; message?: string; details?: Array<{ path: string; message: string }> } }).error;
  // A validation error's details say which argument is wrong; its message only says "see details".
  const details = Array.isArray(error?.details) ? error.details.map((d) => `${d.path === 'store_id' ? '--store' : d.path === 'url' ? '--url' : d.path === 'event' ? '--event' : d.path} ${d.message}`).join('; ') : '';
  const message = details === '' ? (error?.message ?? `HTTP ${response.status}`) : `Invalid argument: ${details}.`;
  if (response.status === 404 && error?.message?.startsWith('No route')) {
    throw new UsageError(`${origin} is not an integration-sdk sandbox with controls (${message}): check --base-url (INTEGRATION_BASE_URL).`);
  }
  throw new ControlError(message, response.status === 404 || response.status >= 500 ? 1 : 2);
}

function storeName(id: string): string {
  return STORES.find((s) => s.id === id)?.name ?? id;
}

function describeOrder({ order, previous_status, deliveries }: OrderAnswer, event: string): string {
  const lines: string[] = [];
  if (event === 'order.created') {
    const items = order.items.map((i) => `${i.quantity} × ${i.external_id}`).join(', ');
    lines.push(`Order ${order.display_number} created in ${storeName(order.store_id)}: ${items}, total ${order.totals.total.toFixed(2)}, status ${order.status}.`);
    lines.push(`  order_id ${order.order_id}`);
  } else if (previous_status === order.status) {
    return `Order ${order.display_number} is already ${order.status}: nothing emitted.`;
  } else {
    lines.push(`Order ${order.display_number}: ${previous_status} → ${order.status}.`);
  }
  if (deliveries.length === 0) {
    lines.push(`No endpoint subscribes to ${event} for this store: register one with`, '  integration-sdk webhooks create, or integration-sdk sandbox deliver --url <url>');
  } else {
    lines.push(`${event} sent to ${deliveries.length === 1 ? '1 endpoint' : `${deliveries.length} endpoints`} (the sandbox's log shows each attempt):`);
    for (const d of deliveries) lines.push(`  → ${shape(d.url)}`);
  }
  return lines.join('\n');
}

function describeDelivery({ delivery, order_id, webhook, replaced }: DeliverAnswer): string {
  const lines = [
    `${webhook.registered ? 'Registered endpoint' : 'Using endpoint'} ${webhook.id}`,
    `  for ${shape(webhook.url)}`,
    webhook.registered ? `  events ${webhook.events.join(', ')}: later orders reach it too.` : `  events ${webhook.events.join(', ')}.`,
    ...(replaced ? [`  Deleted endpoint ${replaced.id},`, `  registered by an earlier deliver for ${shape(replaced.url)}.`] : []),
    `Secret: ${webhook.secret}`,
    '  X-Service-Signature-256: sha256=HMAC-SHA256(secret, "<timestamp>.<raw body>")',
  ];
  lines.push(order_id === null ? delivery.event : `${delivery.event}, new order ${order_id}`);
  const attempt = `attempt ${delivery.attempt_count}/6`;
  if (delivery.status === 'delivered') {
    lines.push(`  ${attempt} answered ${delivery.response_status}: delivered.`);
    return lines.join('\n');
  }
  const answer = delivery.response_status === null ? noAnswer(delivery.last_error) : `answered ${delivery.response_status}`;
  lines.push(`  ${attempt} failed, ${answer}: ${delivery.last_error}`);
  if (delivery.status === 'dead') {
    lines.push('  The delivery is dead.');
  } else {
    const wait = delivery.next_attempt_at === null ? 0 : Math.max(0, Date.parse(delivery.next_attempt_at) - Date.now());
    lines.push(`  The sandbox tries again in ${duration(wait)}; its log shows each attempt.`);
  }
  return lines.join('\n');
}

/** Origin and path of a receiver URL: its query may hold a token. */
function shape(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
