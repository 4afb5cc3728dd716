// Real-socket helpers for the body-limit suites (reader, handler, sandbox): servers closed after each
// test, and a client that offers a body in 64 KB chunks without ever ending it.
import { once } from 'node:events';
import { request, type ClientRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, vi } from 'vitest';

const servers: Server[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Listens on 127.0.0.1:0 and closes the server after the test; returns the port. */
export async function listenForTest(server: Server): Promise<number> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

export interface Answer {
  status: number;
  text: string;
  connection: string | undefined;
}

/** POSTs `headers`, then offers `chunks` × 64 KB without ending the body; `answer` is the response, if any. */
export function postEndless(port: number, path: string, headers: Record<string, string | number>, chunks: number): { answer: Promise<Answer>; client: ClientRequest } {
  const client = request({ port, host: '127.0.0.1', method: 'POST', path, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    client.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, connection: res.headers.connection }));
      res.on('error', reject);
    });
    client.on('error', reject);
  });
  answer.catch(() => {});
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let written = 0;
  const writeMore = () => {
    while (written < chunks) {
      written += 1;
      if (!client.write(chunk)) return void client.once('drain', writeMore);
    }
  };
  client.flushHeaders();
  writeMore();
  return { answer, client };
}
