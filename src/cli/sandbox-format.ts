// How `integration-sdk sandbox` prints what happens: one line per request and per delivery attempt,
// shapes only (route templates, endpoints without query), never a key, a secret or a payload.
import type { SandboxLogEntry } from '../sandbox/index.ts';

/** Log lines fit an 80-column terminal. */
export const LOG_WIDTH = 80;

/**
 * One log line, at most 80 columns: `HH:MM:SS  POST   /integration/v1/orders/:id  200  3 ms`, or for
 * a delivery attempt `HH:MM:SS  order.created        :3000/hooks  500  2/6, retry in 5 min` (attempt
 * 2 of 6). Routes are templates and endpoints have no query: no id, key, secret or payload is
 * printed. A receiver on this machine (plain http to 127.0.0.1, localhost or [::1]) shows as
 * `:port/path`; the route or endpoint, the one part of any length, is cut in its middle to fit.
 */
export function formatLogEntry(entry: SandboxLogEntry, at = new Date()): string {
  const time = at.toTimeString().slice(0, 8);
  if (entry.type === 'request') {
    const status = `${String(entry.status ?? 'dropped').padStart(3)}  ${Math.round(entry.ms)} ms`;
    return `${time}  ${entry.method.padEnd(6)} ${fitted(entry.route, 40, LOG_WIDTH - 18 - status.length)} ${status}`;
  }
  const answer = entry.status === null ? noAnswer(entry.error) : String(entry.status);
  const attempt = `${entry.attempt}/${entry.maxAttempts}`;
  const outcome = entry.outcome === 'delivered'
    ? `${attempt} delivered`
    : entry.outcome === 'dead'
      ? `${attempt}, dead`
      : `${attempt}, retry in ${duration(entry.retryInMs ?? 0)}`;
  const tail = `  ${answer}  ${outcome}`;
  return `${time}  ${entry.event.padEnd(20)} ${fitted(receiver(entry.endpoint), 0, LOG_WIDTH - 31 - tail.length)}${tail}`;
}

/** `http://127.0.0.1:3000/hooks` → `:3000/hooks`: every local receiver has the same host, its port tells them apart. */
function receiver(endpoint: string): string {
  const local = /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/.*)?$/.exec(endpoint);
  return local ? `${local[2] ?? ':80'}${local[3] ?? '/'}` : endpoint;
}

/** `text` padded to `column`, or cut in its middle to `room` (an ellipsis where it was cut). */
function fitted(text: string, column: number, room: number): string {
  if (text.length <= room) return text.padEnd(Math.min(column, room));
  const head = Math.ceil((room - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (room - 1 - head))}`;
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
