// `integration-sdk webhooks rotate --endpoint <id>`: a single-merchant integration replaces its
// webhook secret with the three steps of tenants.md ("Rotating a webhook secret"), the command
// itself being the only record of where it stands (no secret is written anywhere):
//
// 1. registers a second endpoint at the old one's URL with its events, and prints its secret once
//    (stdout only, with the service's warning) with what to do: add it beside the old one in the
//    receiver (`createInbox({ secret: [old, new] })`, `WEBHOOK_SECRET=old,new`), and the command
//    that resumes the rotation (`--resume <new id>`);
// 2. sends `webhooks.test` to it and waits (`--wait`, 60 s by default) until the delivery log shows
//    it delivered: the receiver accepted the new secret. A refused test is sent again every few
//    seconds, so a receiver redeployed during the wait is seen. Not in time: both endpoints stay
//    (an inbox given both secrets runs each event once) and the command says how to resume;
// 3. deletes the old endpoint (one already gone counts as deleted).
//
// A second run without `--resume` that finds another endpoint at the URL refuses to add a third:
// either it is this rotation's (its secret was printed: resume with it) or nobody saw its secret
// (delete it, run again). `--resume <new id>` starts at step 2; when the old endpoint is already
// gone, the rotation is over.
import { systemClock } from '../clock.ts';
import { NotFoundError, WebhookLimitReachedError } from '../errors/index.ts';
import type { IntegrationClient } from '../index.ts';
import type { SubscribableEvent, WebhookEndpoint } from '../schemas/webhooks.ts';
import { withoutQuery } from '../tenants/endpoints.ts';
import { awaitTestDelivery, describeLastAttempt } from '../tenants/rotate-verify.ts';
import { UsageError } from './config.ts';

export interface WebhooksRotateOptions {
  endpoint: string;
  resume?: string;
  /** Seconds step 2 waits. */
  wait: number;
  json?: boolean;
}

const command = (old: string, next: string) => `integration-sdk webhooks rotate --endpoint ${old} --resume ${next}`;

/** Progress for people (lines) or scripts (one JSON object per step). */
function say(json: boolean | undefined, event: Record<string, unknown>, text: string): void {
  console.log(json ? JSON.stringify(event) : text);
}

export async function webhooksRotate(client: IntegrationClient, options: WebhooksRotateOptions): Promise<number> {
  const endpoints = await client.webhooks.list();
  const old = endpoints.find((endpoint) => endpoint.id === options.endpoint);
  let next: Pick<WebhookEndpoint, 'id' | 'url'> | undefined;
  if (options.resume !== undefined) {
    next = endpoints.find((endpoint) => endpoint.id === options.resume);
    if (!next) throw new UsageError(`No endpoint ${options.resume} to resume with: check the id the interrupted rotation printed (integration-sdk webhooks list).`);
    if (!old) {
      say(options.json, { step: 'done', old_endpoint_id: options.endpoint, endpoint_id: next.id, already: true }, `The old endpoint ${options.endpoint} is already deleted: the rotation is over, deliveries come from ${next.id} only. Remove the old secret from your receiver.`);
      return 0;
    }
    if (next.url !== old.url) throw new UsageError(`Endpoint ${next.id} is not at ${withoutQuery(old.url)}, the URL of ${old.id}: it is not this rotation's.`);
  } else {
    if (!old) throw new UsageError(`No endpoint ${options.endpoint}: check its id (integration-sdk webhooks list).`);
    const beside = endpoints.filter((endpoint) => endpoint.id !== old.id && endpoint.url === old.url);
    if (beside.length > 0) {
      const ids = beside.map((endpoint) => endpoint.id).join(', ');
      process.stderr.write(
        `Another endpoint is already at ${withoutQuery(old.url)}: ${ids} (an interrupted rotation?). If your receiver has its secret, finish with: ${command(old.id, beside[0]!.id)}. ` +
          `If nobody saw its secret, delete it (integration-sdk webhooks delete ${beside[0]!.id}) and run this again. Nothing was changed.\n`,
      );
      return 1;
    }
    next = await registerBeside(client, old, endpoints, options.json);
    if (!next) return 1;
  }

  // Step 2: the receiver must accept a delivery signed with the new secret.
  if (!options.json) console.log(`Waiting up to ${options.wait} s for a test delivery to ${next.id} to be delivered (the receiver accepted the new secret)…`);
  const outcome = await awaitTestDelivery({ client, endpointId: next.id, clock: systemClock, timeoutMs: options.wait * 1000 });
  if (!outcome.verified) {
    process.stderr.write(
      `The receiver did not accept a delivery signed with the new secret within ${options.wait} s: ${describeLastAttempt(outcome.lastAttempt)}. ` +
        `Both endpoints stay (an inbox given both secrets runs each event once). Add the new secret beside the old one, then run: ${command(old.id, next.id)}\n`,
    );
    return 1;
  }
  say(options.json, { step: 'verified', endpoint_id: next.id, delivery_id: outcome.deliveryId }, `The receiver accepted test delivery ${outcome.deliveryId} to ${next.id}.`);

  // Step 3.
  try {
    await client.webhooks.delete(old.id);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  say(
    options.json,
    { step: 'done', old_endpoint_id: old.id, endpoint_id: next.id },
    `Deleted the old endpoint ${old.id}: deliveries come from ${next.id} only. Remove the old secret from your receiver.`,
  );
  return 0;
}

/** Step 1: the new endpoint, its secret printed once; `undefined` (said why) when no slot is free. */
async function registerBeside(client: IntegrationClient, old: WebhookEndpoint, endpoints: WebhookEndpoint[], json: boolean | undefined): Promise<Pick<WebhookEndpoint, 'id' | 'url'> | undefined> {
  let created;
  try {
    created = await client.webhooks.create({ url: old.url, events: old.events as SubscribableEvent[] });
  } catch (error) {
    if (!(error instanceof WebhookLimitReachedError)) throw error;
    const named = endpoints.map((endpoint) => `${endpoint.id} (${withoutQuery(endpoint.url)})`).join(', ');
    process.stderr.write(`The rotation needs a second endpoint beside ${old.id}, and these ${endpoints.length} hold the key's 5 slots: ${named}. Delete one you no longer use (integration-sdk webhooks delete <id>), then run this again. Nothing was changed.\n`);
    return undefined;
  }
  // Printed at once, once: a crash after this line leaves the user the secret and the way to resume.
  say(
    json,
    { step: 'registered', old_endpoint_id: old.id, endpoint: { id: created.id, url: created.url, events: created.events }, secret: created.secret, warning: created.warning, resume: command(old.id, created.id) },
    [
      `Registered endpoint ${created.id} beside ${old.id}, for ${created.url} (${created.events.join(', ')}).`,
      `Secret: ${created.secret}`,
      created.warning,
      'Add it beside the old secret in your receiver (createInbox({ secret: [oldSecret, newSecret] }), or WEBHOOK_SECRET=old,new) and deploy it: both endpoints deliver every event until the old one is deleted.',
      `If this command stops before it is done, finish with: ${command(old.id, created.id)}`,
    ].join('\n'),
  );
  return created;
}
