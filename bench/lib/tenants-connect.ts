// Tenants connected for real against the sandbox, many at a time, with each endpoint's secret kept
// as the service showed it at creation (read off the wire through the clients' `fetch`), so that a
// figure can sign deliveries for any tenant as the service would.
import type { CreateTenantsOptions } from 'integration-sdk/tenants';

/** A `fetch` for `clientOptions` that keeps, per tenant id (the webhook URL's last segment), the secret of the endpoint it registered. */
export function secretRecorder(): { fetch: typeof globalThis.fetch; secrets: Map<string, string> } {
  const secrets = new Map<string, string>();
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const registering = request.method === 'POST' && new URL(request.url).pathname.endsWith('/webhooks');
    const body = registering ? ((await request.clone().json()) as { url: string }) : undefined;
    const response = await globalThis.fetch(request);
    if (body && response.ok) {
      const created = (await response.clone().json()) as { secret: string };
      secrets.set(body.url.split('/').at(-1)!, created.secret);
    }
    return response;
  };
  return { fetch, secrets };
}

/** The budget is not what these figures measure: wide enough never to wait. */
export const UNLIMITED: Pick<CreateTenantsOptions, 'keyBudget' | 'egress'> = {
  keyBudget: { requestsPerMinute: 1e9, burst: 1e9 },
  egress: { requestsPerMinute: 1e9, burst: 1e9 },
};

/** Runs `work` for each id, `concurrency` at a time. */
export async function inBatches(ids: readonly string[], work: (id: string, index: number) => Promise<unknown>, concurrency = 16): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const index = next++;
        await work(ids[index]!, index);
      }
    }),
  );
}
