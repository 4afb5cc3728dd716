import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncStateConformance } from 'integration-sdk/sync';
import { sqliteSyncState } from 'integration-sdk/sync/sqlite';
import { tempDir } from '../../inbox/support/temp-dir.ts';

const dir = tempDir('sync-sqlite-conformance');
afterAll(() => dir.remove());

let n = 0;
syncStateConformance('sqliteSyncState', () => sqliteSyncState({ path: `${dir.path}/state-${++n}.db` }), { describe, it, expect, beforeEach, afterEach });
