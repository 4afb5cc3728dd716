// OpenTelemetry attribute values derived from the channel contexts. Only the fields the contract
// declares safe (method, route template, host, status, counts, event name, delivery id) ever reach
// an attribute; an error contributes its class name and code, never its message.
import type { Attributes } from '@opentelemetry/api';
import type { AttemptContext, ResultCounts } from '../diagnostics.ts';

const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY']);

/** `http.request.method` as the HTTP semantic conventions want it: a known method, else `_OTHER`. */
export function requestMethod(method: string): string {
  const upper = method.toUpperCase();
  return KNOWN_METHODS.has(upper) ? upper : '_OTHER';
}

/** `server.address` and `server.port` from the contract's `host[:port]` (IPv6 hosts in brackets). */
export function serverAttributes(serverAddress: string): Attributes {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(serverAddress);
  if (!match) return { 'server.address': serverAddress };
  const host = match[1]!.replace(/^\[|\]$/g, '');
  return match[2] ? { 'server.address': host, 'server.port': Number(match[2]) } : { 'server.address': host };
}

/** The attributes an attempt's span and its duration metric share (the HTTP conventions' own). */
export function attemptAttributes(attempt: AttemptContext): Attributes {
  return { 'http.request.method': requestMethod(attempt.method), 'url.template': attempt.route, ...serverAttributes(attempt.serverAddress) };
}

/**
 * `error.type`: the status code for an HTTP error answer (as the HTTP conventions say), else the
 * error's class name (`TimeoutError`, `ConnectionError`), else nothing.
 */
export function errorType(status: number | undefined, error: unknown): string | undefined {
  if (status !== undefined && status >= 400) return String(status);
  if (error === undefined) return undefined;
  return error instanceof Error ? error.name : '_OTHER';
}

/** A span status message that cannot hold data: the class name, and its code when it is a plain token. */
export function safeErrorMessage(error: unknown): string {
  if (!(error instanceof Error)) return 'Error';
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? `${error.name}: ${code}` : error.name;
}

/** Result counts as attributes under `prefix` (`integration_sdk.result.ok`, ...); numbers only. */
export function countAttributes(prefix: string, counts: ResultCounts | undefined): Attributes {
  const attributes: Attributes = {};
  if (!counts) return attributes;
  for (const [name, value] of Object.entries(counts)) {
    if (typeof value === 'number' && /^[A-Za-z0-9_]{1,64}$/.test(name)) attributes[`${prefix}.${name}`] = value;
  }
  return attributes;
}
