// The files a push writes beside its input (the errors CSV, the checkpoint), checked before it reads
// or sends anything: a path that is the input itself (the same name, a symlink or a hard link) would
// destroy the user's file, and a directory that is missing or not writable would stop the run midway.
import { constants, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { UsageError } from './config.ts';

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') return undefined; // a parent is a file: reported by the directory check
    throw error;
  }
}

/** The same file on disk: device and inode, so a symlink or a hard link counts as the file. */
function sameFile(a: Stats | undefined, b: Stats | undefined): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

async function writable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Why `path` cannot be written, or `undefined` when it can (it may not exist yet). */
async function unwritable(path: string, existing: Stats | undefined): Promise<string | undefined> {
  if (existing?.isDirectory()) return 'it is a directory';
  if (existing !== undefined) return (await writable(path)) ? undefined : 'it is not writable';
  const directory = dirname(resolve(path));
  const parent = await statOrUndefined(directory);
  if (parent === undefined) return `its directory ${directory} does not exist`;
  if (!parent.isDirectory()) return `${directory} is not a directory`;
  return (await writable(directory)) ? undefined : `its directory ${directory} is not writable`;
}

/**
 * Refuses (UsageError, exit 2) an errors or checkpoint path that is the input or each other, or that
 * cannot be written. `checkpoint` is undefined for a dry run, which writes none.
 */
export async function checkOutputPaths(input: string, errors: string, checkpoint: string | undefined): Promise<void> {
  const inputStats = await statOrUndefined(input);
  const outputs = [
    { path: errors, what: 'the errors file', fix: 'pass another --errors path', fixWrite: 'fix that or pass another --errors path' },
    ...(checkpoint === undefined ? [] : [{ path: checkpoint, what: 'the checkpoint', fix: 'move or rename the input file', fixWrite: 'fix that or copy the input file to a writable directory' }]),
  ];
  const seen: Array<{ path: string; stats: Stats | undefined }> = [];
  for (const { path, what, fix, fixWrite } of outputs) {
    const stats = await statOrUndefined(path);
    if (resolve(path) === resolve(input) || sameFile(stats, inputStats)) {
      throw new UsageError(`${path} is the input file itself (the same file, a symlink or a hard link to it), so ${what} would overwrite it: ${fix} (nothing was sent).`);
    }
    if (seen.some((other) => resolve(other.path) === resolve(path) || sameFile(other.stats, stats))) {
      throw new UsageError(`${path} would be both the errors file and the checkpoint: pass another --errors path (nothing was sent).`);
    }
    const problem = await unwritable(path, stats);
    if (problem !== undefined) throw new UsageError(`Cannot write ${what} ${path}: ${problem}; ${fixWrite} (nothing was sent).`);
    seen.push({ path, stats });
  }
}
