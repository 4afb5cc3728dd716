import { safeParse as checkSchema } from 'zod/mini';
import {
  EVENT_DATA_SCHEMAS,
  EventEnvelopeSchema,
  isKnownEventName,
  type WebhookEvent,
} from '../schemas/events.ts';
import { fail, failMissingHeader } from './fail.ts';
import { DELIVERY_HEADERS, type DeliveryHeaderName } from './header-names.ts';
import { readHeader, type WebhookHeaders } from './read-header.ts';

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
