/**
 * One way to open a SQLite file for the SDK's stores (the inbox's, the sync state's): `node:sqlite`
 * feature detection across Node 22–26, prepared statements cached per connection, and waits for a
 * lock held by another connection taken asynchronously, so the event loop keeps serving.
 */
import { ConfigurationError } from '../errors/integration-error.ts';
import { sleep, systemClock } from '../clock.ts';

export interface SqliteStatement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
}
type DatabaseClass = new (path: string) => SqliteDatabase;

/**
 * The one feature detection of `node:sqlite`: `Database` from Node 26, `DatabaseSync` on Node
 * 22.13–25 (`Database` first: on Node 26 `DatabaseSync` is a deprecated alias, DEP0210);
 * `undefined` on a Node without it (before 22.13, where `process.getBuiltinModule` or the module
 * is missing).
 */
function nodeSqliteClass(): DatabaseClass | undefined {
  let sqlite: Record<string, unknown> | undefined;
  try {
    sqlite = process.getBuiltinModule?.('node:sqlite') as Record<string, unknown> | undefined;
  } catch {
    sqlite = undefined;
  }
  const found = sqlite?.Database ?? sqlite?.DatabaseSync;
  return typeof found === 'function' ? (found as DatabaseClass) : undefined;
}

/** Whether the SQLite stores can run on this Node. */
export function nodeSqliteAvailable(): boolean {
  return nodeSqliteClass() !== undefined;
}

/**
 * Which parts need which Node, in one sentence, as the README's table has it (the whole package
 * 22.12, the SQLite stores 22.13): what a SQLite store says on a Node without `node:sqlite`.
 * `alternative` is what to use instead on a Node where the rest of the package runs (the CLI's
 * "a Postgres store (a postgres:// URL)", a store's Postgres twin).
 */
export function sqliteNodeRequirement(alternative = 'a Postgres store (a postgres:// URL)', version = process.versions.node): string {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const before = (wantedMajor: number, wantedMinor: number) => major < wantedMajor || (major === wantedMajor && minor < wantedMinor);
  const needs = `The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node ${version}`;
  const postgres = 'works on every Node the package supports (22.12 and newer), as the client and webhooks do';
  if (before(22, 12)) return `${needs}, older than the 22.12 the whole package needs: a Postgres store ${postgres}, but not on this one; upgrade Node to 22.13 or newer.`;
  if (before(22, 13)) return `${needs}: use ${alternative}, which ${postgres}, or upgrade Node to 22.13 or newer.`;
  return `The SQLite stores need node:sqlite (Node 22.13 or newer without a flag), which this Node ${version} does not provide (was it started with --no-experimental-sqlite?): use ${alternative}, or run it without that flag.`;
}

/** `node:sqlite`'s database class; a `ConfigurationError` naming `owner` where there is none. */
export function sqliteDatabaseClass(owner: string, alternative: string): DatabaseClass {
  const found = nodeSqliteClass();
  if (!found) throw new ConfigurationError(`${owner} cannot open: ${sqliteNodeRequirement(alternative)}`);
  return found;
}

/** Whether a driver error means another connection holds the lock (worth waiting for). */
export function isSqliteBusy(error: unknown): boolean {
  const text = `${(error as { code?: unknown })?.code ?? ''} ${(error as Error)?.message ?? ''}`;
  return /SQLITE_BUSY|SQLITE_LOCKED|database is locked|database table is locked/i.test(text);
}

/** Runs `body` in a `BEGIN IMMEDIATE` transaction: commits its result, rolls back on a throw. */
export function sqliteTransaction<T>(database: SqliteDatabase, body: () => T): T {
  database.exec('BEGIN IMMEDIATE');
  try {
    const result = body();
    database.exec('COMMIT');
    return result;
  } catch (error) {
    try {
      database.exec('ROLLBACK');
    } catch {
      // Nothing began, or SQLite already rolled back.
    }
    throw error;
  }
}

/** The longest pause between two tries of an operation waiting for a lock, in ms. */
const MAX_RETRY_STEP_MS = 16;

export interface SqliteFileOptions {
  /** The store's `path` option, as the user gave it (checked here: a non-empty string). */
  path: unknown;
  /**
   * The store's `busyTimeoutMs` option, as given: the longest wait for a lock held by another
   * connection, per operation, in ms (checked here; default 5000).
   */
  busyTimeoutMs: unknown;
  /** Names the store in errors ("sqliteStore", "sqliteSyncState"). */
  owner: string;
  /** The store to use instead on a Node without `node:sqlite` ("postgresStore"). */
  alternative: string;
}

/** A lazily opened SQLite file. */
export interface SqliteFile {
  /** The file, as the store's `path` option named it. */
  readonly path: string;
  /** The store's lock wait, checked (see {@link SqliteFileOptions.busyTimeoutMs}). */
  readonly busyTimeoutMs: number;
  /**
   * Runs `operation` on the database, trying again in short asynchronous steps while another
   * connection holds the lock, until `deadlineMs` from now (default `busyTimeoutMs`); then throws
   * the driver's busy error. Each try fails at once on a held lock: the event loop never waits.
   */
  attempt<T>(operation: (database: SqliteDatabase) => T, deadlineMs?: number): Promise<T>;
  /** Whether `close()` was called. */
  readonly closed: boolean;
  close(): void;
}

/** `promise`, or nothing more to wait for once `deadline` (epoch ms) has come. */
async function untilOr(promise: Promise<void>, deadline: number): Promise<void> {
  const left = deadline - systemClock.now();
  if (left <= 0) return;
  let cancel = () => {};
  await Promise.race([promise, new Promise<void>((resolve) => (cancel = systemClock.setTimeout(resolve, left)))]);
  cancel();
}

/** The path and lock wait every SQLite store takes, checked once for all of them. */
function checkedFileOptions(options: SqliteFileOptions): SqliteFileOptions & { path: string; busyTimeoutMs: number } {
  const { path, owner } = options;
  if (typeof path !== 'string' || path === '') throw new ConfigurationError(`${owner} needs { path }: the database file.`);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  // A NaN deadline would never pass: a locked file would be retried forever.
  if (typeof busyTimeoutMs !== 'number' || !Number.isFinite(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ConfigurationError(`${owner}: busyTimeoutMs must be a number of milliseconds >= 0.`);
  }
  return { ...options, path, busyTimeoutMs };
}

/**
 * Opens (on first use) the SQLite file of a store. Checks at once that `node:sqlite` exists, so a
 * store made on a Node without it fails at construction, not at its first query.
 */
export function openSqliteFile(given: SqliteFileOptions): SqliteFile {
  const options = checkedFileOptions(given);
  const Database = sqliteDatabaseClass(options.owner, options.alternative);
  let db: SqliteDatabase | undefined;
  let closed = false;
  // Prepared once per connection: preparing costs about as much as a small insert.
  let statements = new Map<string, SqliteStatement>();

  function open(): SqliteDatabase {
    if (closed) throw new ConfigurationError(`This ${options.owner} is closed.`);
    if (db) return db;
    const raw = new Database(options.path);
    statements = new Map();
    const opened: SqliteDatabase = {
      exec: (sql) => raw.exec(sql),
      close: () => raw.close(),
      prepare(sql) {
        let statement = statements.get(sql);
        if (!statement) {
          statement = raw.prepare(sql);
          statements.set(sql, statement);
        }
        return statement;
      },
    };
    // No driver-level wait: SQLite's busy handler sleeps inside the call, which blocks the event
    // loop for its whole timeout on each try. A locked database fails at once, and attempt()
    // waits between tries asynchronously.
    opened.exec('PRAGMA busy_timeout = 0');
    db = opened;
    return opened;
  }

  // While another connection holds the lock, one poller per file looks for it to be free (short
  // steps first, as a lock is usually held for a few ms, then longer ones), and every operation
  // waiting meanwhile tries again when it is: many waiting operations (20 deliveries, a worker's
  // 8 handlers) do not each spin against the lock, taking the CPU its holder needs.
  let lockWait: Promise<void> | undefined;
  let waitUntil = 0;
  function waitForLock(): Promise<void> {
    return (async () => {
      let step = 1;
      try {
        while (systemClock.now() < waitUntil) {
          await sleep(systemClock, Math.min(step, Math.max(1, waitUntil - systemClock.now())));
          step = Math.min(step * 2, MAX_RETRY_STEP_MS);
          try {
            const database = open();
            database.exec('BEGIN IMMEDIATE');
            database.exec('ROLLBACK');
            return;
          } catch (error) {
            if (!isSqliteBusy(error)) return;
          }
        }
      } finally {
        lockWait = undefined;
        waitUntil = 0;
      }
    })();
  }

  return {
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs,
    async attempt(operation, deadlineMs = options.busyTimeoutMs) {
      const deadline = systemClock.now() + deadlineMs;
      for (;;) {
        // Another operation of this file already waits for the lock: wait with it, not beside it.
        if (lockWait) await untilOr(lockWait, deadline);
        try {
          return operation(open());
        } catch (error) {
          if (!isSqliteBusy(error) || systemClock.now() >= deadline) throw error;
          waitUntil = Math.max(waitUntil, deadline);
          lockWait ??= waitForLock();
        }
      }
    },
    get closed() {
      return closed;
    },
    close() {
      closed = true;
      db?.close();
      db = undefined;
    },
  };
}

/**
 * Adds a column to an existing table unless it is there (SQLite has no `ADD COLUMN IF NOT
 * EXISTS`): how a store migrates a database written by an earlier version.
 */
export function addSqliteColumn(database: SqliteDatabase, table: string, column: string, definition: string): void {
  const columns = database.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
  if (!columns.some((existing) => existing.name === column)) database.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
}
