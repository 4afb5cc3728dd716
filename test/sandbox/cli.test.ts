import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseCliArgs } from '../../src/sandbox/cli-args.ts';

const cli = fileURLToPath(new URL('../../src/sandbox/cli.ts', import.meta.url));

describe('integration-sdk sandbox', () => {
  test('parses its options', () => {
    expect(parseCliArgs(['sandbox', '--port', '4010', '--time-scale=0.001', '--secure-receivers'])).toEqual({
      command: 'sandbox', options: { port: 4010, timeScale: 0.001, allowInsecureReceivers: false },
    });
    expect(parseCliArgs([]).command).toBe('help');
    expect(() => parseCliArgs(['sandbox', '--port', 'x'])).toThrow(/--port/);
    expect(() => parseCliArgs(['sandbox', '--time-scale'])).toThrow(/needs a value/);
    expect(() => parseCliArgs(['serve'])).toThrow(/Unknown command/);
  });

  test('prints the URL and keys, serves, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [cli, 'sandbox', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    const health = await fetch(`${url}/integration/v1/health`, { headers: { 'x-api-key': key } });
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
