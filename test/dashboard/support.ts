import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A node:http server on a free loopback port around `listener`, and its close. */
export async function listen(listener: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `name=value` pairs of a response's Set-Cookie headers, as a Cookie header. */
export function cookiesOf(response: Response): string {
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

/** The hidden CSRF field of a page. */
export function csrfOf(page: string): string {
  const match = /name="csrf" value="([^"]*)"/.exec(page);
  if (!match) throw new Error('no CSRF field on the page');
  return match[1]!;
}

export const TOKEN = 'dashboard-test-token-0123456789abcdef';

/** Polls `read` until `accept` holds (setup code outside a test, where expect.poll is not allowed). */
export async function waitFor<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms: last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The fields of the page's POST form to `action` (its hidden inputs), as a form body. */
export function formOf(page: string, action: string): URLSearchParams {
  const form = new RegExp(`<form method="post" action="${action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(page);
  if (!form) throw new Error(`no form posting to ${action} on the page`);
  const fields = new URLSearchParams();
  for (const input of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields.set(input[1]!, input[2]!.replaceAll('&amp;', '&'));
  return fields;
}
