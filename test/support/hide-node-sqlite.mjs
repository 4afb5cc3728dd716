// Preloaded with `--import` (NODE_OPTIONS) into a CLI process: the process sees a Node without
// node:sqlite, as Node 20 and 22.12 are, while the rest of it runs as usual. It fakes the feature
// detection the SQLite stores use (src/storage/sqlite.ts reads process.getBuiltinModule), nothing else.
const getBuiltinModule = process.getBuiltinModule;
process.getBuiltinModule = (id) => (id === 'node:sqlite' || id === 'sqlite' ? undefined : getBuiltinModule.call(process, id));
