import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Core } from './core.ts';
import { isDropped } from './exchange.ts';

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
        body: await readBody(req),
        ip: req.socket.remoteAddress ?? 'unknown',
      });
      if (isDropped(result)) {
        // A lost response: the client sees the connection reset after the work was done.
        req.socket.destroy();
        return;
      }
      res.writeHead(result.status, result.headers);
      res.end(result.body ?? undefined);
    })().catch(() => req.socket.destroy());
  });
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

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive sockets of clients would hold close() open until they time out.
    server.closeAllConnections();
  });
}
