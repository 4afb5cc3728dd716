/**
 * Step 2 of a webhook secret rotation (tenants.md, "Rotating a webhook secret"): a `webhooks.test`
 * is sent to the new endpoint, and the rotation waits until a receiver verified it with the new
 * secret (the caller's `verifiedByReceiver`, read often and for free) or the service's delivery log
 * shows it delivered (read less often: each read is a request on the merchant's key). A test the
 * receiver refused (it did not have the secret yet) is sent again after a while, so a receiver that
 * learns the secret during the wait is seen at once rather than at the service's next retry.
 * Shared by `tenants.rotateWebhookSecret` and the CLI's `webhooks rotate`.
 */
import { sleep, type Clock } from '../clock.ts';
import type { WebhookDelivery, WebhookTestResult } from '../schemas/webhooks.ts';

/** The calls the wait makes (an `IntegrationClient` fits; `webhooks:manage`). */
export interface TestDeliveryClient {
  webhooks: {
    test(webhookId: string): Promise<WebhookTestResult>;
    deliveries(webhookId: string, options?: { limit?: number }): Promise<WebhookDelivery[]>;
  };
}

export interface TestDeliveryWait {
  client: TestDeliveryClient;
  endpointId: string;
  clock: Clock;
  /** How long to wait, in ms (the contract's 60 s). */
  timeoutMs: number;
  /** Whether a receiver recorded that it verified a delivery with the new secret. */
  verifiedByReceiver?: () => Promise<boolean>;
}

export type TestDeliveryOutcome =
  | { verified: true; by: 'receiver' | 'delivery-log'; deliveryId: string | null }
  /** `lastAttempt`: the newest test delivery as the log last showed it (its answer, its error). */
  | { verified: false; lastAttempt: WebhookDelivery | undefined };

/** The receiver's record is read this often. */
const RECEIVER_POLL_MS = 200;
/** The delivery log is read after 1, 2 and 4 s, then every 5 s. */
const LOG_READS_MS = [1000, 1000, 2000];
const LOG_EVERY_MS = 5000;
/** A refused test is sent again after this long. */
const RESEND_AFTER_MS = 5000;
/** The log's page: the newest deliveries of the endpoint, the test among orders flowing meanwhile. */
const LOG_LIMIT = 100;

const refused = (delivery: WebhookDelivery | undefined) => delivery !== undefined && (delivery.status === 'retrying' || delivery.status === 'dead');

/**
 * Sends `webhooks.test` to `endpointId` and waits until it is verified (see the module comment),
 * at most `timeoutMs`.
 */
export async function awaitTestDelivery(wait: TestDeliveryWait): Promise<TestDeliveryOutcome> {
  const { client, endpointId, clock, timeoutMs, verifiedByReceiver } = wait;
  const deadline = clock.now() + timeoutMs;
  const sent: string[] = [(await client.webhooks.test(endpointId)).delivery_id];
  let sentAt = clock.now();
  let logReads = 0;
  let nextLogAt = sentAt + LOG_READS_MS[0]!;
  let lastAttempt: WebhookDelivery | undefined;
  for (;;) {
    if (verifiedByReceiver && (await verifiedByReceiver())) return { verified: true, by: 'receiver', deliveryId: null };
    const now = clock.now();
    if (now >= nextLogAt || now >= deadline) {
      const log = await client.webhooks.deliveries(endpointId, { limit: LOG_LIMIT });
      const tests = log.filter((delivery) => sent.includes(delivery.id));
      const delivered = tests.find((delivery) => delivery.status === 'delivered');
      if (delivered) return { verified: true, by: 'delivery-log', deliveryId: delivered.id };
      lastAttempt = tests.find((delivery) => delivery.id === sent.at(-1)) ?? lastAttempt;
      logReads += 1;
      nextLogAt = clock.now() + (LOG_READS_MS[logReads] ?? LOG_EVERY_MS);
      if (refused(lastAttempt) && clock.now() - sentAt >= RESEND_AFTER_MS && clock.now() < deadline) {
        sent.push((await client.webhooks.test(endpointId)).delivery_id);
        sentAt = clock.now();
      }
    }
    if (now >= deadline) return { verified: false, lastAttempt };
    await sleep(clock, Math.max(0, Math.min(RECEIVER_POLL_MS, deadline - clock.now())));
  }
}

/** The last test's outcome as a clause for an error message: its answer or its error, never a payload. */
export function describeLastAttempt(lastAttempt: WebhookDelivery | undefined): string {
  if (lastAttempt === undefined) return 'the delivery log did not list the test delivery yet';
  const answer = lastAttempt.response_status === null ? 'no answer' : `answer ${lastAttempt.response_status}`;
  return `the last test delivery is ${lastAttempt.status} (${answer}${lastAttempt.last_error ? `: ${lastAttempt.last_error.slice(0, 200)}` : ''})`;
}
