// A push on a real terminal: the CLI runs under `script` (util-linux), which gives it a
// pseudo-terminal of 99 columns; Ctrl-C is typed into that terminal. The screen is rebuilt from the
// bytes written (carriage returns, erase-line), as a terminal would show them.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cleanEnv, cliArgs, sentProductIds, startProxiedSandbox, type ProxiedSandbox } from './helpers.ts';

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let service: ProxiedSandbox;
let dir: string;

/** The lines a terminal shows after these bytes: \r returns, ESC[K erases to the end, other escapes are ignored. */
function screen(bytes: string): string[] {
  const lines: string[] = [''];
  let column = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === '\r') column = 0;
    else if (c === '\n') {
      lines.push('');
      column = 0;
    } else if (c === '\x1b') {
      const sequence = /^\x1b\[[?\d;]*[A-Za-z]/.exec(bytes.slice(i))?.[0] ?? '\x1b';
      if (sequence === '\x1b[K') lines[lines.length - 1] = lines.at(-1)!.slice(0, column);
      i += sequence.length - 1;
    } else {
      const line = lines.at(-1)!.padEnd(column);
      lines[lines.length - 1] = line.slice(0, column) + c + line.slice(column + 1);
      column++;
    }
  }
  return lines.map((l) => l.trimEnd()).filter((l) => l !== '');
}

/** Runs the CLI on a 99-column terminal; `typed` is called with a function that types into it. */
async function onTerminal(args: string[], env: Record<string, string>, typed?: (type: (text: string) => void, output: () => string) => void) {
  const command = ['stty cols 99 rows 30;', 'exec', process.execPath, ...cliArgs(args)].map((a, i) => (i < 2 ? a : `'${a}'`)).join(' ');
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...cleanEnv(env), TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  typed?.((text) => child.stdin.write(text), () => output);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, lines: screen(output) };
}

beforeAll(async () => {
  service = await startProxiedSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cli-tty-'));
});

afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

test.skipIf(!hasScript)('Ctrl-C leaves no half-overwritten line; the bar fits 99 columns with its ETA; --resume says where it continues', async () => {
  const env = { INTEGRATION_API_KEY: service.sandbox.keys.full, INTEGRATION_BASE_URL: service.baseUrl };
  const file = join(dir, 'tty.csv');
  writeFileSync(file, `external_id,name,price\n${Array.from({ length: 1500 }, (_, i) => `T-${i},Item ${i},1`).join('\n')}\n`);
  const first = service.requests.length;
  let release = () => {};
  service.hold = new Promise<void>((resolve) => (release = resolve));
  const interrupted = await onTerminal(['catalog', 'push', file], env, (type, output) => {
    const timer = setInterval(() => {
      if (sentProductIds(service.requests.slice(first)).length === 0 || !output().includes('ETA')) return;
      clearInterval(timer);
      type('\x03'); // Ctrl-C, as typed
      const released = setInterval(() => {
        if (!output().includes('Stopping')) return;
        clearInterval(released);
        setTimeout(release, 600); // the bar is drawn again meanwhile
      }, 10);
    }, 10);
  });
  service.hold = undefined;
  expect(interrupted.code).toBe(130);
  const { lines } = interrupted;
  expect(lines).toContain('Stopping: no new batch is sent, waiting for the batches in flight (Ctrl-C again to exit at once).');
  expect(lines).toContain('catalog push: 500/1500 items, created 500, updated 0, errors 0');
  expect(lines.filter((l) => /ETA \d/.test(l)).length).toBeGreaterThan(0);
  for (const line of lines.filter((l) => /ETA/.test(l))) {
    expect(line.length).toBeLessThanOrEqual(97);
    expect(line).toMatch(/\/1500 created \d+ updated 0 errors 0 \d+ items\/s elapsed \d+s ETA \d+s$/);
  }
  // Every line is one thing: no bar fragment before or after a message.
  for (const line of lines) expect(line, line).toMatch(/^(Stopping:|catalog push: \d|Interrupted:|(catalog push )?\[)/);

  const resumed = await onTerminal(['catalog', 'push', file, '--resume'], env);
  expect(resumed.code).toBe(0);
  expect(resumed.lines[0]).toBe('catalog push: resuming at line 502: 500 of 1500 items were acknowledged before and are skipped.');
  expect(resumed.lines).toContain('catalog push: 1500/1500 items, created 1500, updated 0, errors 0');
}, 60_000);
