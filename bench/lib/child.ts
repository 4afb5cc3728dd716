// Child processes: whole-process figures (peak RSS, import time, bulk runs) are measured in fresh
// processes so that one run's heap, JIT state and open sockets cannot pollute the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The package root: children run from it, so `integration-sdk` resolves to dist/ by self-reference. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function workerPath(name: string): string {
  return fileURLToPath(new URL(`../workers/${name}`, import.meta.url));
}

export interface NodeRun {
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` to completion; rejects with its stderr when it exits non-zero. */
export function runNode(args: readonly string[], { timeoutMs = 180_000 }: { timeoutMs?: number } = {}): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`node ${args.join(' ')} exited with ${code ?? signal}:\n${stderr.trim().slice(-2000)}`));
    });
  });
}

/** Runs a worker script and returns the JSON object it printed as its last stdout line. */
export async function runWorker<T>(name: string, args: readonly string[] = [], nodeFlags: readonly string[] = []): Promise<T> {
  const { stdout } = await runNode([...nodeFlags, workerPath(name), ...args]);
  const last = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`worker ${name} printed no JSON result: ${stdout.slice(-500)}`);
  }
}

export interface RunningServer<Info> {
  info: Info;
  stop(): Promise<void>;
}

/**
 * Starts a long-lived worker (a server) in its own process, so its CPU and memory are not counted
 * against the client being measured. It prints one JSON line (its address) once listening.
 */
export function startServer<Info>(name: string, args: readonly string[] = []): Promise<RunningServer<Info>> {
  const child = spawn(process.execPath, [workerPath(name), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const onExit = (code: number | null) => reject(new Error(`server ${name} exited with ${code} before listening:\n${stderr.trim()}`));
    child.once('exit', onExit);
    child.once('error', reject);
    lines.once('line', (line) => {
      child.off('exit', onExit);
      lines.close();
      child.stdout.resume(); // keep draining so the child never blocks on a full pipe
      resolve({ info: JSON.parse(line) as Info, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Runs `fn` `times` times one after the other (never in parallel: runs would compete for 2 cores). */
export async function repeat<T>(times: number, fn: (run: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let run = 0; run < times; run += 1) results.push(await fn(run));
  return results;
}
