import { safeParse as checkSchema } from 'zod/mini';
import {
  EVENT_DATA_SCHEMAS,
  EventEnvelopeSchema,
  isKnownEventName,
  type WebhookEvent,
} from '../schemas/events.ts';
import { DELIVERY_HEADERS, fail, failMissingHeader, readHeader, type DeliveryHeaderName, type WebhookHeaders } from './signature.ts';

const decoder = new TextDecoder('utf-8');
const fatalDecoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

interface Issue {
  readonly path: readonly PropertyKey[];
  readonly code?: string;
  readonly expected?: unknown;
}

/**
 * The typed event from a body whose signature has already been checked: the envelope, then the
 * headers' agreement with it, then the known event's `data`. An unknown event name is returned as
 * is with `data: unknown` (spec 6: receivers ignore events they do not recognise). The schemas run
 * with zod's `safeParse`.
 */
export function parseEvent(body: string | Uint8Array, headers: WebhookHeaders): WebhookEvent {
  const envelope = checkSchema(EventEnvelopeSchema, parseJson(body));
  if (!envelope.success) {
    return fail('invalid_payload', `The body is not a delivery { event, delivery_id, ts, data }: ${describeIssues(envelope.error.issues, '')}.`);
  }
  const event = envelope.data;
  checkAgreement(headers, DELIVERY_HEADERS.event, event.event, 'event');
  checkAgreement(headers, DELIVERY_HEADERS.deliveryId, event.delivery_id, 'delivery_id');
  if (!isKnownEventName(event.event)) return event as WebhookEvent;

  const data = checkSchema(EVENT_DATA_SCHEMAS[event.event], event.data);
  if (!data.success) {
    return fail('invalid_payload', `The ${event.event} data does not have the documented shape: ${describeIssues(data.error.issues, 'data')}.`);
  }
  // The check returns the data itself unless a schema had to transform it.
  return (data.data === event.data ? event : { ...event, data: data.data }) as WebhookEvent;
}

/** An authentic delivery read without refusing a shape the SDK did not expect. */
export interface AuthenticDelivery {
  /** The body's `event` (equal to `X-Service-Event`), or the header's when the body has none. */
  readonly event: string;
  /** The body's `delivery_id` (equal to `X-Service-Delivery-Id`), or the header's. */
  readonly deliveryId: string;
  /** The body's `ts`, or the signed `X-Service-Timestamp` when the body has no number there. */
  readonly ts: number;
  /** The body's `data`, as parsed (`null` when the body is not a JSON object). */
  readonly data: unknown;
  /**
   * Where the body differs from the SDK's schema, as paths (`data.customer.email`; `(body)` for a
   * body that is not UTF-8 JSON), never values; `null` when it matches.
   */
  readonly schemaIssues: readonly string[] | null;
}

/** The most schema issues kept for one delivery, and the longest path. */
const MAX_ISSUES = 20;
const MAX_PATH = 200;

/**
 * The delivery of a body whose signature has already been checked, for a receiver that keeps every
 * authentic delivery: headers that disagree with the body still fail (`header_mismatch`: one was
 * altered in transit), but a body that does not match the schema is returned with its issues.
 */
export function readAuthenticDelivery(body: string | Uint8Array, headers: WebhookHeaders, signedTimestamp: number): AuthenticDelivery {
  const eventHeader = readHeader(headers, DELIVERY_HEADERS.event);
  const deliveryIdHeader = readHeader(headers, DELIVERY_HEADERS.deliveryId);
  if (eventHeader === undefined) failMissingHeader(DELIVERY_HEADERS.event);
  if (deliveryIdHeader === undefined) failMissingHeader(DELIVERY_HEADERS.deliveryId);
  let parsed: unknown;
  try {
    parsed = parseJson(body);
  } catch {
    return { event: eventHeader, deliveryId: deliveryIdHeader, ts: signedTimestamp, data: null, schemaIssues: ['(body)'] };
  }
  const fields = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  // Whatever else is wrong, a body naming another event or delivery than its headers is refused.
  if (typeof fields.event === 'string') checkAgreement(headers, DELIVERY_HEADERS.event, fields.event, 'event');
  if (typeof fields.delivery_id === 'string') checkAgreement(headers, DELIVERY_HEADERS.deliveryId, fields.delivery_id, 'delivery_id');
  const envelope = checkSchema(EventEnvelopeSchema, parsed);
  const delivery = {
    event: eventHeader,
    deliveryId: deliveryIdHeader,
    ts: typeof fields.ts === 'number' && Number.isFinite(fields.ts) ? fields.ts : signedTimestamp,
    data: fields.data ?? null,
  };
  if (!envelope.success) return { ...delivery, schemaIssues: issuePaths(envelope.error.issues, '') };
  if (!isKnownEventName(delivery.event)) return { ...delivery, schemaIssues: null };
  const data = checkSchema(EVENT_DATA_SCHEMAS[delivery.event], delivery.data);
  return { ...delivery, schemaIssues: data.success ? null : issuePaths(data.error.issues, 'data') };
}

// Paths only (a key may be chosen by whoever wrote the order, so control characters are replaced
// and each path cut), and a bounded number of them.
function issuePaths(issues: readonly Issue[], root: string): string[] {
  const paths = new Set<string>();
  for (const issue of issues) {
    const path = [root, ...issue.path.map(String)].filter(Boolean).join('.') || '(body)';
    // eslint-disable-next-line no-control-regex -- control characters in a key are what is replaced
    paths.add(path.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, MAX_PATH));
    if (paths.size === MAX_ISSUES) break;
  }
  return [...paths];
}

function parseJson(body: string | Uint8Array): unknown {
  try {
    const bytes = typeof body === 'string' ? encoder.encode(body) : body;
    // Strict UTF-8 (invalid bytes throw, a leading BOM is dropped), as a fatal decoder gives it: the
    // lenient decoder is much faster, and a U+FFFD it gives is either in the body or stands for
    // invalid bytes, which only the fatal decoder can tell apart.
    const text = decoder.decode(bytes);
    return JSON.parse(text.includes('\uFFFD') ? fatalDecoder.decode(bytes) : text);
  } catch {
    return fail('invalid_payload', 'The signed body is not UTF-8 JSON.');
  }
}

// Spec 6.1 sends the event name and delivery id twice; a difference means one was altered in transit.
function checkAgreement(headers: WebhookHeaders, header: DeliveryHeaderName, bodyValue: string, field: string): void {
  const headerValue = readHeader(headers, header);
  if (headerValue === undefined) failMissingHeader(header);
  if (headerValue !== bodyValue) fail('header_mismatch', `The ${header} header differs from the body's ${field}.`);
}

// Paths and expected types only: a value could be personal data (spec 2.7).
function describeIssues(issues: readonly Issue[], root: string): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter(Boolean).join('.');
      return `${path}: ${issue.code === 'invalid_type' ? `expected ${String(issue.expected)}` : issue.code}`;
    })
    .join('; ');
}
