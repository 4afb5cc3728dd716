/**
 * What the sandbox reports to `createSandbox({ log })`: one entry per request and one per delivery
 * attempt. Entries carry shapes, never values: a route template instead of the path (no id, no
 * phone, no query), an endpoint without its query string or credentials, never a key, a secret or
 * a payload.
 */
export type SandboxLogEntry = SandboxRequestLog | SandboxDeliveryLog;

/** One request answered (API routes under `/integration/v1` and the `/_sandbox` controls). */
export interface SandboxRequestLog {
  type: 'request';
  method: string;
  /** The route template, e.g. `/integration/v1/orders/:id`; unknown segments of an unmatched path are `{…}`. */
  route: string;
  /** The status answered; null when a `drop` fault cut the connection. */
  status: number | null;
  /** Time from the request's arrival to its answer, by the sandbox clock. */
  ms: number;
}

/** One webhook delivery attempt that finished (attempts cut short by `close()` are not reported). */
export interface SandboxDeliveryLog {
  type: 'delivery';
  event: string;
  deliveryId: string;
  webhookId: string;
  /** The receiver's origin and path, without query string or credentials. */
  endpoint: string;
  /** 1-based. */
  attempt: number;
  /** 6 (spec 6.4). */
  maxAttempts: number;
  /** The receiver's HTTP status; null when there was none (refused, time-out, blocked). */
  status: number | null;
  /** `retrying` means another attempt follows after `retryInMs`. */
  outcome: 'delivered' | 'retrying' | 'dead';
  /** Why the attempt failed (no payload, no secret), or null. */
  error: string | null;
  /** Scaled wait before the next attempt, or null. */
  retryInMs: number | null;
}

/** `https://user:pw@host/path?token=…` → `https://host/path`. */
export function endpointShape(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** Calls `log` with each entry; a logger that throws never stops a request or a delivery. */
export function safeLog<T>(log: ((entry: T) => void) | undefined): (entry: T) => void {
  return (entry) => {
    try {
      log?.(entry);
    } catch {
      // the caller's logger failed; the sandbox goes on
    }
  };
}
