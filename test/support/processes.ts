// Long-running processes a test starts as a user would (the sandbox on the command line, a
// receiver, the dashboard): output collected, a wait for a line, and a stop that the test awaits.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { cleanEnv, cliArgs } from '../cli/helpers.ts';

/** `node --import` this, and `integration-sdk` resolves to src/ (no build needed). */
export const registerSrc = fileURLToPath(new URL('./register-src.mjs', import.meta.url));

/** Node arguments that run a TypeScript file that imports `integration-sdk`, against src/. */
export function sourceArgs(file: string, args: readonly string[] = []): string[] {
  return ['--import', registerSrc, file, ...args];
}

export interface RunningProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the first line matching `pattern`; rejects if the process exits first. */
  waitFor(pattern: RegExp): Promise<string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export function startProcess(file: string, args: readonly string[], options: SpawnOptions): RunningProcess {
  const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const check of waiters) check();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = once(child, 'exit');
  return {
    child,
    output: () => output,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = output.split('\n').find((candidate) => pattern.test(candidate));
          if (line === undefined) return;
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
        check();
        void exited.then(() => {
          if (waiters.delete(check)) reject(new Error(`exited before printing ${pattern}:\n${output}`));
        });
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** `integration-sdk sandbox` from the sources on a free port, and the environment its `export` line gives. */
export async function startSandboxCommand(args: readonly string[] = []): Promise<{ process: RunningProcess; exportLine: string; env: Record<string, string> }> {
  const sandbox = startProcess(process.execPath, cliArgs(['sandbox', '--port', '0', ...args]), { env: cleanEnv() });
  const exportLine = await sandbox.waitFor(/^export INTEGRATION_BASE_URL=/);
  return { process: sandbox, exportLine, env: exportedVariables(exportLine) };
}

/** The variables of a shell `export A=1 B=2` line. */
export function exportedVariables(line: string): Record<string, string> {
  return Object.fromEntries([...line.replace(/^export\s+/, '').matchAll(/(\w+)=(\S*)/g)].map((match) => [match[1]!, match[2]!]));
}
