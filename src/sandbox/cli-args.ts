/** Options of `integration-sdk sandbox`. */
export interface CliOptions {
  port: number;
  timeScale: number;
  allowInsecureReceivers: boolean;
}

export const USAGE = `Usage: integration-sdk sandbox [--port N] [--time-scale X] [--secure-receivers]

Starts a local emulator of Integration API v1 on 127.0.0.1 and prints its URL and keys.
  --port N             TCP port (default 0: a free port)
  --time-scale X       multiply the webhook retry schedule, e.g. 0.001 (default 1)
  --secure-receivers   apply the production anti-SSRF check to webhook URLs (HTTPS, public hosts)
Stops on Ctrl-C (SIGINT) or SIGTERM.`;

/** Parses argv after the program name; throws an Error whose message is for the user. */
export function parseCliArgs(argv: readonly string[]): { command: 'sandbox' | 'help'; options: CliOptions } {
  const options: CliOptions = { port: 0, timeScale: 1, allowInsecureReceivers: true };
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help', options };
  if (command !== 'sandbox') throw new Error(`Unknown command "${command}".`);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined) throw new Error(`${flag} needs a value.`);
      return v;
    };
    if (flag === '--port') {
      const v = value();
      options.port = /^\d+$/.test(v) && Number(v) <= 65535 ? Number(v) : Number.NaN;
      if (Number.isNaN(options.port)) throw new Error(`--port must be a whole number from 0 to 65535, got "${v}".`);
    } else if (flag === '--time-scale') {
      const v = value();
      options.timeScale = Number(v);
      if (!(options.timeScale >= 0) || v.trim() === '') throw new Error(`--time-scale must be a number ≥ 0, got "${v}".`);
    } else if (flag === '--secure-receivers') {
      options.allowInsecureReceivers = false;
    } else if (flag === '--help' || flag === '-h') {
      return { command: 'help', options };
    } else {
      throw new Error(`Unknown option "${arg}".`);
    }
  }
  return { command: 'sandbox', options };
}
