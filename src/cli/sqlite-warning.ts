/**
 * Node 22 prints "ExperimentalWarning: SQLite is an experimental feature and might change at any
 * time" on stderr the first time a SQLite store loads `node:sqlite`. The command line uses
 * `node:sqlite` on purpose (the README's Node table says from which Node), so to an operator the
 * line reads as a fault, and it lands in output that scripts parse. The command line (never the
 * library, which leaves its user's process alone) drops that one warning; every other is printed.
 */
export function hideSqliteExperimentalWarning(): () => void {
  const emitWarning = process.emitWarning;
  const filtered = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const first = rest[0];
    const type = typeof first === 'string' ? first : (first as { type?: string } | undefined)?.type;
    const message = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && message.startsWith('SQLite is an experimental feature')) return;
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  };
  process.emitWarning = filtered as typeof process.emitWarning;
  return () => {
    if (process.emitWarning === filtered) process.emitWarning = emitWarning;
  };
}
