// src/storage/sqlite.ts, the one way the SDK's stores open SQLite: waiting for a lock another
// connection holds without blocking the event loop, transactions, column migrations, closing.
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/errors/integration-error.ts';
import { addSqliteColumn, isSqliteBusy, openSqliteFile, sqliteNodeRequirement, sqliteTransaction, type SqliteDatabase, type SqliteFile } from '../../src/storage/sqlite.ts';
import { tempDir } from '../inbox/support/temp-dir.ts';

const dir = tempDir('storage-sqlite');
afterAll(() => dir.remove());
let n = 0;
const freshPath = () => `${dir.path}/db-${++n}.sqlite`;

const opened: Array<SqliteFile | DatabaseSync> = [];
afterEach(() => {
  for (const handle of opened.splice(0)) handle.close();
});

function open(path: string, busyTimeoutMs = 2_000): SqliteFile {
  const file = openSqliteFile({ path, busyTimeoutMs, owner: 'testStore', alternative: 'postgresStore' });
  opened.push(file);
  return file;
}

/** A second connection, as another process would hold one, holding the write lock until released. */
function holdWriteLock(path: string): () => void {
  const other = new DatabaseSync(path);
  opened.push(other);
  other.exec('BEGIN IMMEDIATE');
  return () => other.exec('COMMIT');
}

describe('openSqliteFile: a lock held by another connection', () => {
  it('waits for it asynchronously and runs the operation once it is free, the event loop serving meanwhile', async () => {
    const path = freshPath();
    const file = open(path, 60_000);
    await file.attempt((db) => db.exec('CREATE TABLE t (v INTEGER)'));
    const release = holdWriteLock(path);
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 1);
    let inserted = false;
    const insert = file.attempt((db) => db.prepare('INSERT INTO t (v) VALUES (?)').run(7).changes).finally(() => (inserted = true));
    // Timers keep firing while the insert waits for the lock, and it does wait.
    await expect.poll(() => ticks, { timeout: 10_000 }).toBeGreaterThan(3);
    expect(inserted).toBe(false);
    release();
    expect(await insert).toBe(1);
    clearInterval(ticker);
    expect(await file.attempt((db) => db.prepare('SELECT v FROM t').all())).toEqual([{ v: 7 }]);
  });

  it("gives up with the driver's busy error once its deadline has passed", async () => {
    const path = freshPath();
    const file = open(path, 50);
    await file.attempt((db) => db.exec('CREATE TABLE t (v INTEGER)'));
    holdWriteLock(path);
    const failure = await file.attempt((db) => db.exec('INSERT INTO t (v) VALUES (1)')).catch((error: unknown) => error);
    expect(isSqliteBusy(failure)).toBe(true);
  });

  it('does not retry an error that is not a lock', async () => {
    const file = open(freshPath());
    let tries = 0;
    const failure = await file
      .attempt(() => {
        tries += 1;
        throw new Error('no such table: t');
      })
      .catch((error: unknown) => error);
    expect((failure as Error).message).toBe('no such table: t');
    expect(tries).toBe(1);
  });
});

describe('isSqliteBusy', () => {
  it.each([
    [{ code: 'ERR_SQLITE_ERROR', message: 'database is locked' }, true],
    [{ code: 'SQLITE_BUSY', message: '' }, true],
    [new Error('database table is locked: t'), true],
    [new Error('SQLITE_LOCKED_SHAREDCACHE'), true],
    [new Error('UNIQUE constraint failed: t.v'), false],
    [undefined, false],
  ])('%o → %s', (error, busy) => {
    expect(isSqliteBusy(error)).toBe(busy);
  });
});

describe('sqliteTransaction', () => {
  const database = (): SqliteDatabase => {
    const db = new DatabaseSync(freshPath());
    opened.push(db);
    db.exec('CREATE TABLE t (v INTEGER)');
    return db;
  };
  const values = (db: SqliteDatabase) => db.prepare('SELECT v FROM t ORDER BY v').all();

  it("commits the body's writes and returns its result", () => {
    const db = database();
    expect(sqliteTransaction(db, () => db.prepare('INSERT INTO t (v) VALUES (1), (2)').run().changes)).toBe(2);
    expect(values(db)).toEqual([{ v: 1 }, { v: 2 }]);
  });

  it('rolls every write back when the body throws, and rethrows', () => {
    const db = database();
    expect(() =>
      sqliteTransaction(db, () => {
        db.exec('INSERT INTO t (v) VALUES (1)');
        throw new Error('half done');
      }),
    ).toThrow('half done');
    expect(values(db)).toEqual([]);
  });
});

describe('addSqliteColumn', () => {
  it('adds a column to a table an earlier version made, once, keeping its rows', () => {
    const db = new DatabaseSync(freshPath());
    opened.push(db);
    db.exec("CREATE TABLE entries (id TEXT PRIMARY KEY); INSERT INTO entries (id) VALUES ('old')");
    addSqliteColumn(db, 'entries', 'schema_issues', 'TEXT');
    addSqliteColumn(db, 'entries', 'schema_issues', 'TEXT');
    expect(db.prepare('PRAGMA table_info(entries)').all().map((column) => (column as { name: string }).name)).toEqual(['id', 'schema_issues']);
    expect(db.prepare('SELECT id, schema_issues FROM entries').all()).toEqual([{ id: 'old', schema_issues: null }]);
  });
});

describe('closing', () => {
  it('refuses work once closed with a ConfigurationError naming the store, instead of reopening the file', async () => {
    const file = open(freshPath());
    await file.attempt((db) => db.exec('CREATE TABLE t (v INTEGER)'));
    file.close();
    expect(file.closed).toBe(true);
    await expect(file.attempt((db) => db.exec('SELECT 1'))).rejects.toThrow(new ConfigurationError('This testStore is closed.'));
  });
});

describe('openSqliteFile: the options every SQLite store takes', () => {
  // The inbox's, the sync's and the tenants' SQLite stores hand their options over as given: one
  // check, one wording, naming the store the user called.
  it.each([
    [{ path: undefined }, 'testStore needs { path }: the database file.'],
    [{ path: '' }, 'testStore needs { path }: the database file.'],
    [{ path: 'x.db', busyTimeoutMs: Number.NaN }, 'testStore: busyTimeoutMs must be a number of milliseconds >= 0.'],
    [{ path: 'x.db', busyTimeoutMs: -1 }, 'testStore: busyTimeoutMs must be a number of milliseconds >= 0.'],
    [{ path: 'x.db', busyTimeoutMs: '5000' }, 'testStore: busyTimeoutMs must be a number of milliseconds >= 0.'],
  ])('refuses %o with a ConfigurationError', (given, message) => {
    const attempt = () => openSqliteFile({ path: given.path, busyTimeoutMs: 'busyTimeoutMs' in given ? given.busyTimeoutMs : undefined, owner: 'testStore', alternative: 'postgresStore' });
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(message);
  });

  it('waits 5 s for a lock unless told otherwise, and says what it was given', () => {
    const path = freshPath();
    const file = openSqliteFile({ path, busyTimeoutMs: undefined, owner: 'testStore', alternative: 'postgresStore' });
    opened.push(file);
    expect(file).toMatchObject({ path, busyTimeoutMs: 5000 });
  });
});

describe('sqliteNodeRequirement: what a SQLite store says on a Node without node:sqlite, as the README’s table has it', () => {
  it.each([
    ['20.20.2', 'The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node 20.20.2, older than the 22.12 the whole package needs: a Postgres store works on every Node the package supports (22.12 and newer), as the client and webhooks do, but not on this one; upgrade Node to 22.13 or newer.'],
    ['22.11.0', 'The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node 22.11.0, older than the 22.12 the whole package needs: a Postgres store works on every Node the package supports (22.12 and newer), as the client and webhooks do, but not on this one; upgrade Node to 22.13 or newer.'],
    ['22.12.0', 'The SQLite stores need Node 22.13 or newer (node:sqlite) and this is Node 22.12.0: use a Postgres store (a postgres:// URL), which works on every Node the package supports (22.12 and newer), as the client and webhooks do, or upgrade Node to 22.13 or newer.'],
    ['24.11.0', 'The SQLite stores need node:sqlite (Node 22.13 or newer without a flag), which this Node 24.11.0 does not provide (was it started with --no-experimental-sqlite?): use a Postgres store (a postgres:// URL), or run it without that flag.'],
  ])('on Node %s', (version, sentence) => {
    expect(sqliteNodeRequirement('a Postgres store (a postgres:// URL)', version)).toBe(sentence);
  });

  it('a store opened there throws it as a ConfigurationError naming the store and its Postgres twin', () => {
    const getBuiltinModule = process.getBuiltinModule;
    process.getBuiltinModule = ((id: string) => (id === 'node:sqlite' ? undefined : getBuiltinModule.call(process, id))) as typeof process.getBuiltinModule;
    try {
      expect(() => open(freshPath())).toThrow(new ConfigurationError(`testStore cannot open: ${sqliteNodeRequirement('postgresStore')}`));
    } finally {
      process.getBuiltinModule = getBuiltinModule;
    }
    expect(sqliteNodeRequirement('postgresStore')).toContain('use postgresStore, or run it without that flag');
  });
});
