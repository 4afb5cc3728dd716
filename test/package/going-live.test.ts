// docs/going-live.md, run as a user would against the sandbox: its ```sh lines in order (through
// bash, in one working directory, `export`s carried from line to line), its code files written out
// and run with `node`, the lines marked "keeps running" started in the background. What a user
// copies from an output (`<webhook_id>`, `<secret>`, `<order_id>`) is read from that output. Stated
// changes, so that nothing here depends on a free port 4010, 3000 or 4545: the sandbox and the
// dashboard get `--port 0`, the receiver a free port instead of 3000, and the guide's `export`
// line of the sandbox must equal the one it printed but for the port.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/free-port.ts';
import { cliArgs } from '../cli/helpers.ts';
import { exportedVariables, registerSrc, sourceArgs, startProcess, type RunningProcess } from '../support/processes.ts';

const root = resolve(import.meta.dirname, '../..');
const guide = readFileSync(join(root, 'docs', 'going-live.md'), 'utf8');
const blocks = [...guide.matchAll(/```(sh|ts)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1]!, code: match[2]! }));

const cwd = mkdtempSync(join(tmpdir(), 'going-live-'));
// `npm install integration-sdk` stands for this repository: the sample files are where a user finds them.
mkdirSync(join(cwd, 'node_modules'));
symlinkSync(root, join(cwd, 'node_modules', 'integration-sdk'), 'dir');

const running = new Map<string, RunningProcess>();
afterAll(async () => {
  await Promise.all([...running.values()].map((started) => started.stop()));
  rmSync(cwd, { recursive: true, force: true });
});

/** `npx integration-sdk` and `node` as the guide uses them: the CLI and the files against src/. */
const shellPreamble = `
npx() { if [ "$1" = integration-sdk ]; then shift; "${process.execPath}" ${cliArgs([]).map((arg) => `'${arg}'`).join(' ')} "$@"; else command npx "$@"; fi; }
node() { "${process.execPath}" --import '${registerSrc}' "$@"; }
`;

it('every step of docs/going-live.md runs against the sandbox, and the orders land', async () => {
  const receiverPort = String(await freePort());
  const env: Record<string, string> = { PATH: process.env.PATH!, HOME: process.env.HOME!, NODE_NO_WARNINGS: '1', NO_COLOR: '1' };
  const copied: Record<string, string> = {};
  const steps: string[] = [];
  let printedExportLine = '';

  const fill = (line: string) =>
    line.replace(/<(webhook_id|secret|order_id)>/g, (_whole, name: string) => {
      const value = copied[name];
      if (value === undefined) throw new Error(`"${line}" needs <${name}>, which no earlier output gave`);
      return value;
    }).replaceAll(':3000', `:${receiverPort}`);

  /** Reads what a user would copy from an output. */
  const copy = (output: string) => {
    const created = /^Created webhook (\S+) for .*\nSecret: (whsec_\w+)/m.exec(output);
    if (created) Object.assign(copied, { webhook_id: created[1]!, secret: created[2]! });
    const order = /^ {2}order_id (\S+)$/m.exec(output);
    if (order) copied.order_id = order[1]!;
  };

  /** Starts a "keeps running" line in the background (again, if it runs already) and waits until it is ready. */
  async function keepRunning(line: string): Promise<void> {
    const command = line.replace(/#.*$/, '').trim();
    const words = command.split(/\s+/);
    await running.get(command)?.stop();
    let started: RunningProcess;
    if (words[0] === 'npx' && words[1] === 'integration-sdk') {
      started = startProcess(process.execPath, cliArgs([...words.slice(2), '--port', '0']), { cwd, env });
    } else if (words[0] === 'node') {
      started = startProcess(process.execPath, sourceArgs(join(cwd, words[1]!), words.slice(2)), { cwd, env: { ...env, PORT: receiverPort } });
    } else {
      throw new Error(`a "keeps running" line the test cannot start: ${line}`);
    }
    running.set(command, started);
    if (words[2] === 'sandbox') {
      printedExportLine = await started.waitFor(/^export INTEGRATION_BASE_URL=/);
    } else {
      const ready = await started.waitFor(/listening on|^ {2}http:\/\/127\.0\.0\.1:\d+\/\?token=/);
      if (ready.includes('?token=')) expect((await fetch(ready.trim(), { redirect: 'manual' })).status).toBe(303);
    }
  }

  async function shell(line: string): Promise<string> {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done, fail) => {
      execFile('bash', ['-c', `${shellPreamble}\n${line}`], { cwd, env, timeout: 60_000 }, (error, out, err) =>
        error ? fail(new Error(`"${line}" failed (${error.code}):\n${out}${err}`)) : done({ stdout: out, stderr: err }),
      );
    });
    return stdout + stderr;
  }

  const receiver = () => running.get('node receiver.ts')!;

  for (const block of blocks) {
    if (block.lang === 'ts') {
      const name = /^\/\/ ([\w-]+\.ts):/.exec(block.code)?.[1];
      if (!name) throw new Error(`a code block of the guide does not start with "// <file>.ts:": ${block.code.slice(0, 60)}`);
      writeFileSync(join(cwd, name), block.code);
      continue;
    }
    for (const raw of block.code.split('\n').filter((text) => text.trim() !== '' && !text.trim().startsWith('#'))) {
      steps.push(raw);
      if (raw.includes('# keeps running')) {
        await keepRunning(fill(raw));
      } else if (raw.startsWith('export INTEGRATION_BASE_URL=')) {
        // The guide's line is the one the sandbox prints on its default port.
        expect(raw).toBe(printedExportLine.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:4010'));
        Object.assign(env, exportedVariables(printedExportLine));
      } else if (raw.startsWith('export ')) {
        Object.assign(env, exportedVariables(fill(raw.replace(/#.*$/, ''))));
      } else {
        const output = await shell(fill(raw));
        copy(output);
        if (raw.includes('curl ')) expect(output.trim()).toBe('400');
        if (raw.includes('sandbox order create')) await receiver().waitFor(new RegExp(`^order #${/Order (\d+) created/.exec(output)![1]} written to the ERP$`));
        if (raw.includes('sandbox order status')) await receiver().waitFor(/^order #\d+ is now cancelled$/);
        if (raw.includes('node loyalty.ts')) expect(output).toMatch(/^balance (\d+) → (\d+)$/m);
        if (raw.includes('catalog push') && !raw.includes('--dry-run')) expect(output).toMatch(/^catalog push: 3\/3 items, created \d, updated \d, errors 0$/m);
      }
    }
  }

  // The guide walked every step of the recommended order, and the final key's endpoint works.
  expect(steps.filter((line) => line.includes('webhooks create'))).toHaveLength(2);
  expect(receiver().output().match(/written to the ERP/g)).toHaveLength(1);
  expect(env.INTEGRATION_API_KEY).toMatch(/^service_sbxstore01_/);
}, 300_000);
