import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { readNodeBody } from '../../bounded-body.ts';
import { SANDBOX_MAX_BODY_BYTES, type Core } from './core.ts';
import { isDropped } from './exchange.ts';
import { decode } from './fetch-adapter.ts';

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

/** Serves the core on 127.0.0.1 over node:http. */
export async function listen(core: Core, port: number): Promise<RunningServer> {
  const server = createServer((req, res) => {
    void (async () => {
      const result = await core({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: headersOf(req),
        readBody: async () => decode(await readNodeBody(req, { maxBodyBytes: SANDBOX_MAX_BODY_BYTES })),
        ip: req.socket.remoteAddress ?? 'unknown',
      });
      // Malformed HTTP arrived mid-body and was answered already (see answerMalformed).
      if (answeredMalformed.has(req.socket)) return;
      if (isDropped(result)) {
        // A lost response: the client sees the connection reset after the work was done.
        req.socket.destroy();
        return;
      }
      // An answer given before the body was read (a 401, a 413) closes the connection: otherwise
      // node:http would read and discard the rest of the body to keep the connection alive.
      const unread = req.complete ? {} : { connection: 'close' };
      res.writeHead(result.status, { ...result.headers, ...unread });
      res.end(result.body ?? undefined);
    })().catch(() => req.socket.destroy());
  });
  server.on('clientError', answerMalformed);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { port: (server.address() as AddressInfo).port, close: () => closeServer(server) };
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] ?? '', req.rawHeaders[i + 1] ?? '');
  }
  return headers;
}

/** Sockets whose request was answered by {@link answerMalformed} while its handler was running. */
const answeredMalformed = new WeakSet<object>();

const MALFORMED: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  HPE_HEADERS_OVERFLOW: [431, 'Request Header Fields Too Large', 'The request headers are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request did not arrive in time.'],
};

/**
 * Malformed HTTP never reaches the core: node:http reports it here. It is answered with the
 * envelope of spec 2.10 like every other error, then the connection is closed (its state is unknown).
 */
function answerMalformed(error: Error & { code?: string }, socket: Duplex): void {
  // A request in flight (malformed chunked encoding mid-body) may still be answered, as long as
  // nothing of its answer was written: its handler then writes nothing.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true || answeredMalformed.has(socket)) {
    socket.destroy();
    return;
  }
  if (inFlight !== undefined) answeredMalformed.add(socket);
  const [status, text, message] = MALFORMED[error.code ?? ''] ?? [400, 'Bad Request', 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ error: { code: 'VALIDATION_ERROR', message } });
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive sockets of clients would hold close() open until they time out.
    server.closeAllConnections();
  });
}
