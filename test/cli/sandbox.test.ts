import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, test } from 'vitest';
import { cliArgs, runCli } from './helpers.ts';

describe('integration-sdk sandbox', () => {
  test('rejects bad options with exit 2', async () => {
    expect((await runCli(['sandbox', '--port', 'x'])).code).toBe(2);
    expect((await runCli(['sandbox', '--time-scale'])).code).toBe(2);
    const unknown = await runCli(['serve']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command/);
  });

  test('prints the URL and keys, serves, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, cliArgs(['sandbox', '--port', '0', '--time-scale=0.001']), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match?.[1] && output.includes('Ctrl-C')) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
    });
    const key = /full\s+(service_\S+)/.exec(output)?.[1] ?? '';
    expect(output).toMatch(/oneStore\s+service_/);
    expect(output).toMatch(/readOnly\s+service_/);
    expect(output).toMatch(/scaled by 0.001/);
    const health = await fetch(`${url}/integration/v1/health`, { headers: { 'x-api-key': key } });
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
