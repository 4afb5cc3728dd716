import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { IntegrationError } from 'integration-sdk';
import { createWebhookHandler, signWebhook, verifyWebhook, verifyWebhookAsync, WebhookVerificationError } from 'integration-sdk/webhooks';
import { ORDER, STATUS_CHANGE } from './helpers.ts';

const SECRET = 'whsec_conformanceSecretValue';
const NOW = 1_750_000_000; // epoch seconds
const DELIVERY = '7d2b4c1a-5e6f-4a8b-9c0d-1e2f3a4b5c6d';

/** A delivery built by hand from spec 6.1/6.2, independent of signWebhook. */
function deliver(event: string, data: unknown, opts: { ts?: number | string; secret?: string; body?: string; headers?: Record<string, string> } = {}) {
  const ts = String(opts.ts ?? NOW);
  const body = opts.body ?? JSON.stringify({ event, delivery_id: DELIVERY, ts: Number(ts), data });
  const sig = createHmac('sha256', opts.secret ?? SECRET).update(`${ts}.${body}`).digest('hex');
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'X-Service-Event': event,
      'X-Service-Delivery-Id': DELIVERY,
      'X-Service-Timestamp': ts,
      'X-Service-Signature-256': `sha256=${sig}`,
      ...opts.headers,
    } as Record<string, string>,
  };
}

function reason(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(IntegrationError);
    const text = `${(error as Error).message} ${JSON.stringify(error)} ${inspect(error)}`;
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('Maria');
    return (error as WebhookVerificationError).reason;
  }
  return undefined;
}

const at = { now: NOW * 1000 };

describe('verifyWebhook', () => {
  it('returns the typed event for each known event', () => {
    const created = deliver('order.created', ORDER);
    const event = verifyWebhook(created.body, created.headers, SECRET, at);
    expect(event).toMatchObject({ event: 'order.created', delivery_id: DELIVERY, ts: NOW });
    expect(event.data).toMatchObject({ order_id: ORDER.order_id, customer: { name: 'Maria Silva' } });
    const changed = deliver('order.status_changed', STATUS_CHANGE);
    expect(verifyWebhook(changed.body, changed.headers, SECRET, at).data).toMatchObject(STATUS_CHANGE);
    const test = deliver('webhook.test', { webhook_id: 'w1', message: 'hello' });
    expect(verifyWebhook(test.body, test.headers, SECRET, at).event).toBe('webhook.test');
  });

  it('an unknown event is returned, never an error', () => {
    const d = deliver('stock.changed', { anything: [1] });
    const event = verifyWebhook(d.body, d.headers, SECRET, at);
    expect(event.event).toBe('stock.changed');
    expect(event.data).toEqual({ anything: [1] });
  });

  it('raw body as string, Uint8Array and Buffer', () => {
    const d = deliver('webhook.test', { webhook_id: 'w1', message: 'hi' });
    expect(verifyWebhook(new TextEncoder().encode(d.body), d.headers, SECRET, at).event).toBe('webhook.test');
    expect(verifyWebhook(Buffer.from(d.body), d.headers, SECRET, at).event).toBe('webhook.test');
  });

  it('headers as Fetch Headers, lower/upper-case records and array values', () => {
    const d = deliver('webhook.test', { webhook_id: 'w1', message: 'hi' });
    expect(verifyWebhook(d.body, new Headers(d.headers), SECRET, at).event).toBe('webhook.test');
    const lower = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(verifyWebhook(d.body, lower, SECRET, at).event).toBe('webhook.test');
    const upper = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(d.body, upper, SECRET, at).event).toBe('webhook.test');
    const arrays = Object.fromEntries(Object.entries(lower).map(([k, v]) => [k, [v]]));
    expect(verifyWebhook(d.body, arrays, SECRET, at).event).toBe('webhook.test');
  });

  it('secret arrays: any may match', () => {
    const d = deliver('webhook.test', { webhook_id: 'w1', message: 'hi' });
    expect(verifyWebhook(d.body, d.headers, ['whsec_old', SECRET], at).event).toBe('webhook.test');
    expect(reason(() => verifyWebhook(d.body, d.headers, ['whsec_old', 'whsec_other'], at))).toBe('signature_mismatch');
  });

  it('now as a Date or a number; tolerance in both directions; default 300 s', () => {
    const d = deliver('webhook.test', { webhook_id: 'w1', message: 'hi' });
    expect(verifyWebhook(d.body, d.headers, SECRET, { now: new Date(NOW * 1000) }).event).toBe('webhook.test');
    expect(verifyWebhook(d.body, d.headers, SECRET, { now: (NOW + 300) * 1000 }).event).toBe('webhook.test');
    expect(verifyWebhook(d.body, d.headers, SECRET, { now: (NOW - 300) * 1000 }).event).toBe('webhook.test');
    expect(reason(() => verifyWebhook(d.body, d.headers, SECRET, { now: (NOW + 301) * 1000 }))).toBe('timestamp_out_of_tolerance');
    expect(reason(() => verifyWebhook(d.body, d.headers, SECRET, { now: new Date((NOW - 301) * 1000) }))).toBe('timestamp_out_of_tolerance');
    expect(reason(() => verifyWebhook(d.body, d.headers, SECRET, { now: (NOW + 11) * 1000, toleranceSeconds: 10 }))).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhook(d.body, d.headers, SECRET, { now: (NOW + 1000) * 1000, toleranceSeconds: 1000 }).event).toBe('webhook.test');
    // default clock: a delivery from long ago is refused
    expect(reason(() => verifyWebhook(d.body, d.headers, SECRET))).toBe('timestamp_out_of_tolerance');
  });

  it('reasons, in the documented order', () => {
    const d = deliver('order.created', ORDER);
    const without = (name: string) => Object.fromEntries(Object.entries(d.headers).filter(([k]) => k !== name));
    expect(reason(() => verifyWebhook(d.body, without('X-Service-Signature-256'), SECRET, at))).toBe('missing_header');
    expect(reason(() => verifyWebhook(d.body, without('X-Service-Timestamp'), SECRET, at))).toBe('missing_header');
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Timestamp': 'abc' }, SECRET, at))).toBe('invalid_timestamp');
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Timestamp': '1750000000.5' }, SECRET, at))).toBe('invalid_timestamp');
    // timestamp checked before the signature's form
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Timestamp': 'abc', 'X-Service-Signature-256': 'nope' }, SECRET, at))).toBe('invalid_timestamp');
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Signature-256': 'nope' }, SECRET, { now: (NOW + 9999) * 1000 }))).toBe('timestamp_out_of_tolerance');
    const sig = d.headers['X-Service-Signature-256']!;
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Signature-256': 'nope' }, SECRET, at))).toBe('invalid_signature_format');
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Signature-256': sig.toUpperCase().replace('SHA256', 'sha256') }, SECRET, at))).toBe('invalid_signature_format');
    expect(reason(() => verifyWebhook(d.body, { ...d.headers, 'X-Service-Signature-256': sig.slice(7) }, SECRET, at))).toBe('invalid_signature_format');
    expect(reason(() => verifyWebhook(d.body.replace('Maria', 'Mario'), d.headers, SECRET, at))).toBe('signature_mismatch');
    expect(reason(() => verifyWebhook(d.body, d.headers, 'whsec_wrong', at))).toBe('signature_mismatch');
    // a re-serialised body no longer verifies
    expect(reason(() => verifyWebhook(JSON.stringify(JSON.parse(d.body), null, 2), d.headers, SECRET, at))).toBe('signature_mismatch');
    // signature checked before parsing: a tampered, non-JSON body is a mismatch, not invalid_payload
    expect(reason(() => verifyWebhook('not json', d.headers, SECRET, at))).toBe('signature_mismatch');
  });

  it('invalid_payload and header_mismatch only after the signature', () => {
    const bad = deliver('order.created', ORDER, { body: 'not json at all' });
    expect(reason(() => verifyWebhook(bad.body, bad.headers, SECRET, at))).toBe('invalid_payload');
    const broken = deliver('order.created', { order_id: 1 });
    expect(reason(() => verifyWebhook(broken.body, broken.headers, SECRET, at))).toBe('invalid_payload');
    const otherEvent = deliver('order.created', ORDER, { headers: { 'X-Service-Event': 'order.status_changed' } });
    expect(reason(() => verifyWebhook(otherEvent.body, otherEvent.headers, SECRET, at))).toBe('header_mismatch');
    const otherId = deliver('order.created', ORDER, { headers: { 'X-Service-Delivery-Id': '00000000-0000-4000-8000-000000000000' } });
    expect(reason(() => verifyWebhook(otherId.body, otherId.headers, SECRET, at))).toBe('header_mismatch');
  });

  it('verifyWebhookAsync agrees', async () => {
    const d = deliver('order.created', ORDER);
    await expect(verifyWebhookAsync(d.body, new Headers(d.headers), SECRET, at)).resolves.toMatchObject({ event: 'order.created' });
    await expect(verifyWebhookAsync(d.body, d.headers, 'whsec_wrong', at)).rejects.toMatchObject({ reason: 'signature_mismatch' });
    await expect(verifyWebhookAsync(d.body, d.headers, SECRET, { now: new Date(0) })).rejects.toMatchObject({ reason: 'timestamp_out_of_tolerance' });
  });
});

describe('signWebhook', () => {
  it('produces a delivery that verifies, with the five headers', () => {
    const signed = signWebhook({ payload: { event: 'order.created', data: ORDER }, secret: SECRET });
    expect(Object.keys(signed.headers).map((h) => h.toLowerCase()).sort()).toEqual(
      ['content-type', 'x-service-delivery-id', 'x-service-event', 'x-service-signature-256', 'x-service-timestamp'],
    );
    expect(typeof signed.body).toBe('string');
    const event = verifyWebhook(signed.body, signed.headers, SECRET);
    expect(event.event).toBe('order.created');
    expect(JSON.parse(signed.body)).toMatchObject({ event: 'order.created', data: ORDER });
  });

  it('timestamp and deliveryId', () => {
    const signed = signWebhook({ payload: { event: 'webhook.test', data: { webhook_id: 'w', message: 'm' } }, secret: SECRET, timestamp: NOW, deliveryId: DELIVERY });
    expect(signed.headers['X-Service-Timestamp']).toBe(String(NOW));
    expect(signed.headers['X-Service-Delivery-Id']).toBe(DELIVERY);
    expect(JSON.parse(signed.body)).toMatchObject({ delivery_id: DELIVERY, ts: NOW });
    expect(signed.headers['X-Service-Signature-256']).toBe(`sha256=${createHmac('sha256', SECRET).update(`${NOW}.${signed.body}`).digest('hex')}`);
    expect(verifyWebhook(signed.body, signed.headers, SECRET, { now: new Date(NOW * 1000) }).delivery_id).toBe(DELIVERY);
    const fromDate = signWebhook({ payload: { event: 'webhook.test', data: {} }, secret: SECRET, timestamp: new Date(NOW * 1000) });
    expect(fromDate.headers['X-Service-Timestamp']).toBe(String(NOW));
  });
});

describe('createWebhookHandler', () => {
  const post = (d: { body: string; headers: Record<string, string> }) =>
    new Request('https://erp.example.com/hooks', { method: 'POST', body: d.body, headers: d.headers });

  function setup(opts: { isDuplicate?: (id: string) => boolean | Promise<boolean>; throws?: boolean } = {}) {
    const seen: any[] = [];
    const handler = createWebhookHandler({
      secret: SECRET,
      onEvent: async (event) => {
        seen.push(event);
        if (opts.throws) throw new Error('db down');
      },
      isDuplicate: opts.isDuplicate,
    });
    return { handler, seen };
  }

  const fresh = () => {
    const s = signWebhook({ payload: { event: 'order.created', data: ORDER }, secret: SECRET, deliveryId: DELIVERY });
    return { body: s.body, headers: { ...s.headers } as Record<string, string> };
  };

  it('2xx after onEvent resolved', async () => {
    let resolved = false;
    const handler = createWebhookHandler({
      secret: SECRET,
      onEvent: async () => {
        await new Promise((r) => setTimeout(r, 10));
        resolved = true;
      },
    });
    const response = await handler(post(fresh()));
    expect(resolved).toBe(true);
    expect(response.status).toBeGreaterThanOrEqual(200);
    expect(response.status).toBeLessThan(300);
  });

  it('duplicate → 2xx without onEvent; isDuplicate asked with the delivery id (sync or async)', async () => {
    for (const isDuplicate of [(id: string) => id === DELIVERY, async (id: string) => id === DELIVERY]) {
      const { handler, seen } = setup({ isDuplicate });
      const response = await handler(post(fresh()));
      expect(response.status).toBe(200);
      expect(seen).toHaveLength(0);
    }
    const { handler, seen } = setup({ isDuplicate: () => false });
    expect((await handler(post(fresh()))).status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('unknown event → 2xx without onEvent', async () => {
    const { handler, seen } = setup();
    const s = signWebhook({ payload: { event: 'catalog.product_updated', data: {} }, secret: SECRET });
    const response = await handler(post({ body: s.body, headers: { ...s.headers } }));
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(0);
  });

  it('tampered → 400; onEvent throws → 500', async () => {
    const { handler, seen } = setup();
    const d = fresh();
    expect((await handler(post({ ...d, body: d.body.replace('Maria', 'Mario') }))).status).toBe(400);
    expect((await handler(post({ ...d, headers: { ...d.headers, 'X-Service-Signature-256': 'sha256=00' } }))).status).toBe(400);
    expect(seen).toHaveLength(0);
    const throwing = setup({ throws: true });
    const response = await throwing.handler(post(fresh()));
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('Maria');
  });

  describe('.node listener', () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise((r) => server?.close(r));
      server = undefined;
    });

    async function serve(options: { throws?: boolean; isDuplicate?: (id: string) => boolean }) {
      const { handler, seen } = setup(options);
      server = createServer(handler.node);
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const { port } = server.address() as { port: number };
      return { url: `http://127.0.0.1:${port}/hooks`, seen };
    }

    it('answers the same statuses', async () => {
      const ok = await serve({});
      const d = fresh();
      expect((await fetch(ok.url, { method: 'POST', body: d.body, headers: d.headers })).status).toBe(200);
      expect(ok.seen).toHaveLength(1);
      expect((await fetch(ok.url, { method: 'POST', body: d.body + ' ', headers: d.headers })).status).toBe(400);
      const unknown = signWebhook({ payload: { event: 'stock.changed', data: {} }, secret: SECRET });
      expect((await fetch(ok.url, { method: 'POST', body: unknown.body, headers: unknown.headers })).status).toBe(200);
      expect(ok.seen).toHaveLength(1);
      await new Promise((r) => server!.close(r));

      const dup = await serve({ isDuplicate: () => true });
      expect((await fetch(dup.url, { method: 'POST', body: d.body, headers: d.headers })).status).toBe(200);
      expect(dup.seen).toHaveLength(0);
      await new Promise((r) => server!.close(r));

      const throwing = await serve({ throws: true });
      expect((await fetch(throwing.url, { method: 'POST', body: d.body, headers: d.headers })).status).toBe(500);
    });
  });
});
