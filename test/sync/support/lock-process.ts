// Holds the write lock of a SQLite file from another process (as a tool with an open transaction
// would) until killed: says `locked` once it holds it.
import { sqliteDatabaseClass } from '../../../src/storage/sqlite.ts';

const Database = sqliteDatabaseClass('lock-process', 'nothing');
const database = new Database(process.env.SYNC_STATE!);
database.exec('BEGIN IMMEDIATE');
process.stdout.write('locked\n');
// The timer keeps the connection referenced: collected, it would close and free the lock.
setInterval(() => database, 60_000);
