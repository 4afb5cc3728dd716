// Micro-benchmark of webhook verification, in its own process (run with --expose-gc, as mitata
// recommends). For each body size it measures, with mitata's `measure`:
//   floor  – createHmac + timingSafeEqual + JSON.parse written inline: the least any verifier does;
//   sdk    – verifyWebhook, which also checks headers and timestamp and runs the typed (zod) parse;
//   stripe – stripe.webhooks.constructEvent on the same body signed with stripe's scheme;
//   svix   – svix's Webhook.verify on the same body signed with svix's scheme;
//   floor_typed – the floor plus the SDK's own zod schemas (envelope + order) run inline: a
//            diagnostic, the least a verifier that validates the order's shape can cost. It runs
//            in a separate process (with the floor again): zod's schemas share their parse code,
//            and calling it from a second call site made verifyWebhook itself up to 1.8× slower
//            in the same process (polluted type feedback), which no user pays.
// All four get the raw body as a Buffer (what express.raw and node:http hand a receiver) and
// return the parsed event. Passes are interleaved so that drift (thermal, a neighbour's test run)
// hits every contender alike; each contender's figure is the median of its per-pass medians.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { do_not_optimize, measure } from 'mitata';
import Stripe from 'stripe';
import { Webhook } from 'svix';
import { EventEnvelopeSchema, OrderSchema } from 'integration-sdk';
import { signWebhook, verifyWebhook } from 'integration-sdk/webhooks';
import { DELIVERY_ID, orderCreatedOfSize } from '../lib/payloads.ts';

const PASSES = Number(process.argv[2] ?? 3);
const MIN_CPU_TIME_NS = Number(process.argv[3] ?? 700) * 1e6;
const ONLY = (process.argv[4] ?? 'floor,sdk,stripe,svix').split(',') as Contender[];
const SIZES = [
  { name: '2kb', bytes: 2 * 1024 },
  { name: '64kb', bytes: 64 * 1024 },
];

// Headers a receiver really gets from node:http besides the signed ones: every verifier that takes
// a header record has to look through them.
const TRANSPORT_HEADERS = {
  host: 'erp.example.com',
  'user-agent': 'Integration-Webhooks/1.0',
  'content-type': 'application/json',
  accept: '*/*',
  'accept-encoding': 'gzip',
  connection: 'keep-alive',
  'x-forwarded-for': '203.0.113.7',
};

type Contender = 'floor' | 'sdk' | 'stripe' | 'svix' | 'floor_typed';

function contenders(bytes: number): Record<Contender, () => unknown> {
  const ts = Math.floor(Date.now() / 1000);
  const { event, json } = orderCreatedOfSize(bytes, ts);

  // Ours: signed by the SDK's own signer, the same body bytes.
  const sdkSecret = `whsec_${randomBytes(24).toString('base64url')}`;
  const signed = signWebhook({ payload: { event: event.event, data: event.data }, secret: sdkSecret, timestamp: ts, deliveryId: DELIVERY_ID });
  if (signed.body !== json) throw new Error('signWebhook produced a different body than the benchmark payload');
  const body = Buffer.from(json);
  const sdkHeaders: Record<string, string> = { ...TRANSPORT_HEADERS, 'content-length': String(body.length), ...lowerCased(signed.headers) };

  // Stripe: `t=<ts>,v1=<hmac>` over `<ts>.<body>`, verified by constructEvent (which JSON.parses).
  const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const stripe = new Stripe('sk_test_benchmark');
  const stripeHeader = stripe.webhooks.generateTestHeaderString({ payload: json, secret: stripeSecret, timestamp: ts });

  // Svix: base64 HMAC of `<id>.<ts>.<body>` in `svix-signature`, verified by Webhook.verify.
  const svixSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const svix = new Webhook(svixSecret);
  const svixId = 'msg_2bQ0zXoP6g1hAAAAAAAAAAAAAAA';
  const svixHeaders = {
    ...TRANSPORT_HEADERS,
    'content-length': String(body.length),
    'svix-id': svixId,
    'svix-timestamp': String(ts),
    'svix-signature': svix.sign(svixId, new Date(ts * 1000), json),
  };

  const floorSignature = sdkHeaders['x-service-signature-256']!;
  const floor = () => {
    const digest = createHmac('sha256', sdkSecret).update(`${ts}.`).update(body).digest();
    if (!timingSafeEqual(digest, Buffer.from(floorSignature.slice('sha256='.length), 'hex'))) throw new Error('floor: bad signature');
    return JSON.parse(body.toString('utf8')) as unknown;
  };
  const run: Record<Contender, () => unknown> = {
    floor,
    sdk: () => verifyWebhook(body, sdkHeaders, sdkSecret),
    stripe: () => stripe.webhooks.constructEvent(body, stripeHeader, stripeSecret),
    svix: () => svix.verify(body, svixHeaders),
    floor_typed: () => {
      const envelope = EventEnvelopeSchema.parse(floor());
      return { ...envelope, data: OrderSchema.parse(envelope.data) };
    },
  };
  // Every contender must accept its delivery and return the same event, or the comparison is void.
  for (const name of ONLY) {
    const parsed = run[name]() as { delivery_id?: string; data?: { items?: unknown[] } };
    if (parsed.data?.items?.length !== event.data.items.length) throw new Error(`${name} did not return the order`);
  }
  return run;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

const results: Record<string, unknown> = {};
for (const size of SIZES) {
  const run = contenders(size.bytes);
  const names = ONLY;
  const perPass: Partial<Record<Contender, { p50: number; avg: number; p99: number; samples: number }[]>> = Object.fromEntries(names.map((name) => [name, []]));
  for (let pass = 0; pass < PASSES; pass += 1) {
    // Rotate the order each pass: no contender always runs first (cold) or last.
    const order = names.map((_, i) => names[(i + pass) % names.length]!);
    for (const name of order) {
      const fn = run[name];
      // batch_threshold 0: every sample is one call for every contender. Left to itself mitata
      // batches only the calls its cold warm-up found fast, and a batched p50 (a mean over 4096
      // calls, GC included) is not comparable with an unbatched one (a true median).
      const stats = await measure(() => do_not_optimize(fn()), { min_cpu_time: MIN_CPU_TIME_NS, batch_threshold: 0 });
      perPass[name]!.push({ p50: stats.p50, avg: stats.avg, p99: stats.p99, samples: stats.samples.length });
    }
  }
  results[size.name] = { bytes: Buffer.byteLength(JSON.stringify(orderCreatedOfSize(size.bytes, 0).event)), perPass };
}
console.log(JSON.stringify(results));
