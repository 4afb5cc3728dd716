import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from 'integration-sdk';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../support/temp-dir.ts';

const dir = tempDir('inbox-sqlite-store');
afterAll(() => dir.remove());
afterEach(() => {
  vi.restoreAllMocks();
});

const getBuiltinModule = process.getBuiltinModule.bind(process);
/** node:sqlite as another Node version exports it. */
function nodeSqliteExports(exports: Record<string, unknown>) {
  vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => (id === 'node:sqlite' ? exports : getBuiltinModule(id))) as typeof process.getBuiltinModule);
}

let n = 0;
const freshPath = () => `${dir.path}/inbox-${++n}.db`;
const entry = (deliveryId: string) => ({ deliveryId, event: 'webhook.test', orderId: null, ts: 1, payload: '{}', known: true, receivedAt: 1 });

describe('sqliteStore and the node:sqlite of each Node version', () => {
  it('opens a real file with `Database`, the class name from Node 26 on', async () => {
    nodeSqliteExports({ Database: DatabaseSync });
    const store = sqliteStore({ path: freshPath() });
    await store.migrate();
    expect(await store.insert(entry('a'))).toBe('stored');
    expect(await store.insert(entry('a'))).toBe('duplicate');
    await store.close();
  });

  it('prefers `Database` to the deprecated `DatabaseSync` alias (DEP0210) where both exist', async () => {
    const opened: string[] = [];
    class Database extends DatabaseSync {
      constructor(path: string) {
        super(path);
        opened.push('Database');
      }
    }
    class DeprecatedAlias extends DatabaseSync {
      constructor(path: string) {
        super(path);
        opened.push('DatabaseSync');
      }
    }
    nodeSqliteExports({ Database, DatabaseSync: DeprecatedAlias });
    const store = sqliteStore({ path: freshPath() });
    await store.migrate();
    await store.close();
    expect(opened).toEqual(['Database']);
  });

  it('opens with `DatabaseSync` on Node 22 to 25', async () => {
    nodeSqliteExports({ DatabaseSync });
    const store = sqliteStore({ path: freshPath() });
    await store.migrate();
    expect(await store.insert(entry('b'))).toBe('stored');
    await store.close();
  });

  it('fails at construction with a ConfigurationError naming the Node version where node:sqlite is missing', () => {
    vi.spyOn(process, 'getBuiltinModule').mockImplementation(((id: string) => {
      if (id === 'node:sqlite') throw Object.assign(new Error('No such built-in module: node:sqlite'), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' });
      return getBuiltinModule(id);
    }) as typeof process.getBuiltinModule);
    expect(() => sqliteStore({ path: freshPath() })).toThrow(ConfigurationError);
    expect(() => sqliteStore({ path: freshPath() })).toThrow(/sqliteStore cannot open: The SQLite stores need node:sqlite \(Node 22\.13 or newer/);
  });
});

describe('sqliteStore options', () => {
  it.each([[{}], [{ path: '' }], [{ path: 42 }], [{ path: freshPath(), busyTimeoutMs: Number.NaN }], [{ path: freshPath(), busyTimeoutMs: -1 }]])(
    'refuses %o with a ConfigurationError',
    (options) => {
      expect(() => sqliteStore(options as never)).toThrow(ConfigurationError);
    },
  );

  it('refuses work once closed, with a ConfigurationError', async () => {
    const store = sqliteStore({ path: freshPath() });
    await store.migrate();
    await store.close();
    await expect(store.insert(entry('c'))).rejects.toThrow(ConfigurationError);
  });
});
