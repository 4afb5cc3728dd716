// How `integration-sdk sandbox` prints what happens: one line per request and per delivery attempt,
// shapes only (route templates, endpoints without query), never a key, a secret or a payload.
import type { SandboxLogEntry } from '../sandbox/index.ts';

/**
 * One log line: `HH:MM:SS  POST   /integration/v1/orders/:id  200  3 ms`, or for a delivery attempt
 * `HH:MM:SS  order.created        http://127.0.0.1:3000/hooks  500  attempt 1/6, retry in 60 s`.
 * Routes are templates and endpoints have no query: no id, key, secret or payload is printed.
 */
export function formatLogEntry(entry: SandboxLogEntry, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  if (entry.type === 'request') {
    return `${time}  ${entry.method.padEnd(6)} ${entry.route.padEnd(40)} ${String(entry.status ?? 'dropped').padStart(3)}  ${Math.round(entry.ms)} ms`;
  }
  const answer = entry.status === null ? noAnswer(entry.error) : String(entry.status);
  const attempt = `attempt ${entry.attempt}/${entry.maxAttempts}`;
  const outcome = entry.outcome === 'delivered'
    ? ' delivered'
    : entry.outcome === 'dead'
      ? ', dead (no attempt left)'
      : `, retry in ${duration(entry.retryInMs ?? 0)}`;
  return `${time}  ${entry.event.padEnd(20)} ${entry.endpoint}  ${answer}  ${attempt}${outcome}`;
}

/** A word for an attempt without an HTTP answer. */
export function noAnswer(error: string | null): string {
  if (error === null) return 'no answer';
  if (/connection refused/.test(error)) return 'refused';
  if (error.startsWith('timeout')) return 'timeout';
  if (error.startsWith('anti-SSRF')) return 'blocked';
  if (error.startsWith('connection failed')) return 'conn error';
  return 'no answer';
}

/** `60 ms`, `2.5 s`, `5 min`, `14 h 36 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))} s`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return rest === 0 ? `${Math.floor(minutes / 60)} h` : `${Math.floor(minutes / 60)} h ${rest} min`;
}
