import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inboxStoreConformance } from 'integration-sdk/inbox';
import { sqliteStore } from 'integration-sdk/inbox/sqlite';
import { tempDir } from '../support/temp-dir.ts';

const dir = tempDir('inbox-sqlite-conformance');
afterAll(() => dir.remove());

let n = 0;
inboxStoreConformance('sqliteStore', () => sqliteStore({ path: `${dir.path}/inbox-${++n}.db` }), {
  describe,
  it,
  expect,
  beforeEach,
  afterEach,
});
