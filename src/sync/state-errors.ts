// What a state store's failure says: one sentence naming the state and what to do, with the
// driver's error kept as `cause` (for logs and the CLI), never a bare "database is locked".
import { isSqliteBusy } from '../storage/sqlite.ts';
import { IntegrationError } from '../errors/integration-error.ts';

/**
 * The sync state could not be used: a SQLite file locked by another process or unreadable, a
 * Postgres server that cannot be reached or refuses the login. The run rejects, keeping what was
 * acknowledged before; `cause` holds the driver's error.
 *
 * @example
 * ```ts
 * try {
 *   await sync.catalog(items);
 * } catch (error) {
 *   if (error instanceof SyncStateError) console.error(error.message); // "The sync state SQLite file ./state.db is locked by another process ..."
 * }
 * ```
 */
export class SyncStateError extends IntegrationError {
  static override readonly errorName: string = 'SyncStateError';
}

/** Postgres and network codes meaning the server was not reached, in words. */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens at that address and port',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved right now',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was cut',
  EHOSTUNREACH: 'the host is unreachable',
  '57P01': 'the server is shutting down',
  '57P03': 'the server is starting up or shutting down',
  '28P01': 'the user or password was refused',
  '28000': 'the user was refused',
  '3D000': 'the database does not exist',
};

function codeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in UNREACHABLE) return code;
    // pg gathers the attempts at each address of a host in an AggregateError.
    const first = (current as { errors?: unknown }).errors;
    if (Array.isArray(first) && first[0] instanceof Error) return codeOf(first[0]);
  }
  return undefined;
}

/**
 * The error a state operation rejects with: the SDK's own errors (a closed state) as they are,
 * anything from the driver as a {@link SyncStateError} whose message names `state`.
 */
export function stateFailure(error: unknown, where: { state: string; busyTimeoutMs?: number }): unknown {
  if (error instanceof IntegrationError) return error;
  const { state } = where;
  if (isSqliteBusy(error)) {
    return new SyncStateError(
      `The sync state (${state}) is locked by another process, which held its write lock for more than ${where.busyTimeoutMs ?? 0} ms: let that process finish or stop it (a tool with an open transaction on the file), then run again.`,
      { cause: error },
    );
  }
  const code = codeOf(error);
  if (code !== undefined) {
    return new SyncStateError(`Cannot reach the sync state (${state}): ${UNREACHABLE[code]}. Check that Postgres is running there and the connection string, then run again.`, { cause: error });
  }
  const reason = (error as Error)?.message ?? String(error);
  return new SyncStateError(`The sync state (${state}) cannot be used: ${reason}. Check that it is the sync's database and that this user may read and write it.`, { cause: error });
}
