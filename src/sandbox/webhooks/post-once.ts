import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../../clock.ts';

/** Spec 6.3 rule 5: the receiver's body is read up to 256 KB, then discarded. */
export const MAX_RECEIVER_BODY = 256 * 1024;

export interface AttemptOutcome {
  /** HTTP status of the receiver's answer; null when there was none (refused, timeout, blocked). */
  status: number | null;
  /** Why the attempt failed; null on a 2xx. */
  error: string | null;
}

interface PostOptions {
  clock: Clock;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * One delivery attempt: POST, no redirect following (a 3xx is a failure), a 2xx within the answer
 * limit, body read up to 256 KB and thrown away. node:http rather than fetch, because fetch would
 * follow redirects and keep sockets in a pool after `close()`.
 */
export function postOnce(target: URL, headers: Record<string, string>, body: string, options: PostOptions): Promise<AttemptOutcome> {
  // Closed while the attempt was still checking its URL: the abort event has already fired.
  if (options.signal.aborted) return Promise.resolve({ status: null, error: 'the sandbox was closed during the attempt' });
  return new Promise((resolve) => {
    let status: number | null = null;
    let settled = false;
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(target, { method: 'POST', agent: false, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } });

    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      options.signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve({ status, error: error ?? judge(status) });
    };
    const onAbort = () => finish('the sandbox was closed during the attempt');
    const seconds = options.timeoutMs / 1000;
    const cancelTimer = options.clock.setTimeout(() => finish(`timeout: no complete answer within ${seconds} s`), options.timeoutMs);
    options.signal.addEventListener('abort', onAbort, { once: true });

    req.on('response', (res: IncomingMessage) => {
      status = res.statusCode ?? null;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RECEIVER_BODY) finish(null);
      });
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
    });
    req.on('error', (error) => finish(`connection failed: ${connectionProblem(error)}`));
    req.end(body);
  });
}

function judge(status: number | null): string | null {
  if (status === null) return 'no answer from the receiver';
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `receiver answered ${status}; redirects are not followed and count as failures`;
  return `receiver answered ${status}; only 2xx is success`;
}

/** What went wrong, in words, as a delivery log's `last_error` says it (not the socket's error text). */
function connectionProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused (nothing listens at that address and port)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the receiver closed the connection';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host cannot be reached';
    default:
      return error.code ? `the connection failed (${error.code})` : 'the connection failed';
  }
}
