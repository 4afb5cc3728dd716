/**
 * The transport-neutral request and answer the emulator core works on. The node:http server and
 * `handle()` both translate to and from these, so a socket and msw see the same service.
 */
export interface CoreRequest {
  method: string;
  /** Path and query as received, e.g. `/integration/v1/loyalty/balance?phone=...`. */
  url: string;
  headers: Headers;
  /**
   * Reads the body text (empty when there is none) within the sandbox's limits, or throws the
   * `BodyLimitError` of the bounded reader. Called only once the key, route and scope passed.
   */
  readBody(): Promise<string>;
  /** Caller address for the per-IP bucket. */
  ip: string;
}

export interface CoreResponse {
  status: number;
  headers: Record<string, string>;
  /** Serialized JSON, or null for 204. */
  body: string | null;
}

/** The answer is lost after processing: the adapter drops the connection (a fault). */
export interface DroppedResponse {
  dropped: true;
}

export type CoreResult = CoreResponse | DroppedResponse;

export function isDropped(result: CoreResult): result is DroppedResponse {
  return 'dropped' in result;
}

/** What a route handler returns; the core serializes it. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): CoreResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

export function toCoreResponse(reply: Reply): CoreResponse {
  if (reply.body === undefined) return { status: reply.status, headers: { ...reply.headers }, body: null };
  return json(reply.status, reply.body, reply.headers);
}
