// Preloaded with `--import` (NODE_OPTIONS) into a CLI process: the process sees a Node without
// node:sqlite, as Node 20 and 22.12 are, while the rest of it runs as usual. It fakes the feature
// detection the SQLite stores use (src/storage/sqlite.ts reads process.getBuiltinModule) and, when
// HIDE_NODE_SQLITE_VERSION is set, the version the process reports (process.versions.node), so
// that what it says names that Node; nothing else.
const getBuiltinModule = process.getBuiltinModule;
process.getBuiltinModule = (id) => (id === 'node:sqlite' || id === 'sqlite' ? undefined : getBuiltinModule.call(process, id));
const version = process.env.HIDE_NODE_SQLITE_VERSION;
if (version) Object.defineProperty(process.versions, 'node', { value: version, enumerable: true, configurable: true });
