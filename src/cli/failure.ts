// What the CLI prints when a command cannot finish: one sentence that says what to do, an exit
// code, and never the key (even if a user pasted it where an argument was expected).
import { ApiError, AuthenticationError, IntegrationError, BulkOperationError, ConfigurationError, ConnectionError, FeatureDisabledError, ForbiddenStoreError, InsufficientScopeError, InternalServerError, InvalidInputError, NotFoundError, RateLimitError, ServiceUnavailableError, SsrfBlockedError, TimeoutError, ValidationError, WebhookLimitReachedError } from '../index.ts';
import { UsageError } from './config.ts';

/** Redacts anything that looks like a key from text the CLI did not write itself (argument echoes). */
export function redact(text: string): string {
  const key = process.env.INTEGRATION_API_KEY?.trim();
  let out = key ? text.replaceAll(key, '[redacted]') : text;
  out = out.replace(/\b(service|sk|whsec)_[A-Za-z0-9_-]{6,}/g, '[redacted]');
  return out;
}

/** What a system or driver error code means, in words (Node's network codes, Postgres's login ones). */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing is listening at that address and port',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved right now (DNS)',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was cut',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection was cut',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate does not name that host",
  '28P01': 'Postgres refused the user or password in the URL',
  '28000': 'Postgres refused the user in the URL',
  '3D000': 'the database named in the URL does not exist',
};

/** The first error code along an error's `cause` chain (a driver's wrapper keeps the system's). */
function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in CAUSES) return code;
  }
  return undefined;
}

/** Why a connection failed, in words ("connection refused: nothing is listening…"). */
export function connectionReason(error: unknown): string {
  const code = codeOf(error);
  return code === undefined ? 'no connection' : CAUSES[code]!;
}

/** node:sqlite's primary result code (`errcode` & 0xff), when the error is one of its. */
function sqliteCode(error: unknown): number | undefined {
  const errcode = (error as { errcode?: unknown } | undefined)?.errcode;
  return error instanceof Error && typeof errcode === 'number' ? errcode & 0xff : undefined;
}

/** How messages name the database a command was given: the inbox's (--store) or the sync state's (--state). */
export interface StoreNames {
  database: string;
  store: string;
  option: string;
  variable: string;
  creates: string;
}
export const INBOX_STORE: StoreNames = { database: 'The inbox database', store: 'the inbox store', option: '--store', variable: 'INTEGRATION_INBOX_STORE', creates: 'the inbox creates its database itself' };
export const SYNC_STATE: StoreNames = { database: 'The sync state database', store: 'the sync state', option: '--state', variable: 'INTEGRATION_SYNC_STATE', creates: 'a push with --state creates it' };

/** What SQLite's own failures of the store file mean to the person who gave --store (or --state). */
const SQLITE_FAILURES: Record<number, (names: StoreNames) => string> = {
  8: (n) => `${n.database} is read-only for this user: check the file's permissions and those of its directory (SQLite writes a journal beside it).`,
  14: (n) => `${n.database} cannot be opened: check the path given to ${n.option} or ${n.variable} and its permissions.`,
  26: (n) => `The file given to ${n.option} (or ${n.variable}) is not a SQLite database: check the path; ${n.creates}.`,
};

/** SQLite's "database is locked" (SQLITE_BUSY, and its extended codes) from node:sqlite. */
function sqliteBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | undefined)?.errcode;
  return error instanceof Error && ((typeof errcode === 'number' && (errcode & 0xff) === 5) || /database is locked/i.test(error.message));
}

/**
 * A failure of the inbox store (the SQLite file or the Postgres server behind --store) in one
 * sentence saying what to do; `undefined` for an error it does not recognise.
 */
export function storeFailure(error: unknown, names: StoreNames = INBOX_STORE): string | undefined {
  const sqlite = SQLITE_FAILURES[sqliteCode(error) ?? -1];
  if (sqlite !== undefined) return sqlite(names);
  if (sqliteBusy(error)) return `${names.database} is busy, another process holding its write lock (a worker, or another command): try again in a moment, or stop that process first.`;
  const code = codeOf(error);
  if (code !== undefined) return `Cannot open ${names.store} (${CAUSES[code]}): check the location given by ${names.option} or ${names.variable}, and that Postgres is running there.`;
  return undefined;
}

/** The service's own words: an ApiError's message without the status, code and route around them. */
function serviceWords(error: ApiError): string {
  return error.message.replace(/^\d{3} [A-Z_]+: /, '').replace(/ \([A-Z]+ \S+\)$/, '').replace(/\.$/, '');
}

/** A refusal by the service, in one sentence: its words, then what to do. */
function serviceRefusal(error: ApiError): string {
  const words = serviceWords(error);
  if (error instanceof NotFoundError) return `${words}: check the id (and that it belongs to the stores this key may use).`;
  if (error instanceof InsufficientScopeError) return `${words}: grant that scope to the key, or use a key that has it.`;
  if (error instanceof ForbiddenStoreError) return `${words}: use a key that may write that store.`;
  if (error instanceof SsrfBlockedError) return `${words}: give a public HTTPS URL.`;
  if (error instanceof WebhookLimitReachedError) return `${words}: delete an endpoint you no longer use first (integration-sdk webhooks list, then webhooks delete <id>).`;
  if (error instanceof ValidationError) return `${words}: fix that argument and run the command again.`;
  if (error instanceof InternalServerError || error instanceof ServiceUnavailableError) return `The service failed (${error.status} ${error.code}: ${words}), even after retries: run the command again in a moment.`;
  return `The service refused the request (${error.status} ${error.code}): ${words}.`;
}

/** Maps what a command threw to a one-sentence message and an exit code. */
export function failure(error: unknown, names: StoreNames = INBOX_STORE): { message: string; code: number } {
  if (error instanceof BulkOperationError && error.cause !== undefined) return failure(error.cause, names);
  if (error instanceof UsageError || error instanceof ConfigurationError) return { message: error.message, code: 2 };
  if (error instanceof AuthenticationError) return { message: 'The service rejected the key (401): check INTEGRATION_API_KEY or --api-key-file.', code: 2 };
  if (error instanceof FeatureDisabledError) return { message: 'The integration is disabled for this merchant (FEATURE_DISABLED): ask the platform to enable it.', code: 2 };
  if (error instanceof TimeoutError) return { message: 'The service did not answer in time, even after retries: run the command again in a moment; if it keeps happening, check the service\'s status and the network.', code: 2 };
  if (error instanceof ConnectionError) {
    return { message: `Cannot reach the service (${connectionReason(error)}): check INTEGRATION_BASE_URL (or --base-url) and the network, then run the command again.`, code: 2 };
  }
  if (error instanceof InvalidInputError) return { message: error.message, code: 2 };
  // The delta sync's own refusals (another run holds the lease, the lease was lost) say what to do.
  if (error instanceof IntegrationError && (error.name === 'SyncRunInProgressError' || error.name === 'SyncLeaseLostError')) return { message: error.message, code: 2 };
  if (error instanceof RateLimitError) {
    return { message: "The service kept answering 429 (the key's rate limit was spent, even after waiting and retrying): another process is probably using the same key; wait for it to finish, then run the command again.", code: 2 };
  }
  if (error instanceof ApiError) return { message: serviceRefusal(error), code: 1 };
  // The SDK's own errors are covered above: what is left came from the inbox store or is a bug.
  const store = storeFailure(error, names);
  if (store !== undefined) return { message: store, code: 2 };
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { message: `Unexpected error (${text}): run the command again; if it happens again, report it with this message.`, code: 2 };
}

