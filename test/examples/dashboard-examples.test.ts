// Each dashboard example mounted under /integration in its framework: the sign-in link sets the
// cookie and leaves the address, the overview answers, and an action's form POST (the body the
// framework must hand over unread) goes through with its CSRF token.
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import * as expressExample from '../../examples/dashboard/express.ts';
import * as fastifyExample from '../../examples/dashboard/fastify.ts';
import * as honoExample from '../../examples/dashboard/hono.ts';
import * as nextjsExample from '../../examples/dashboard/nextjs-route.ts';
import * as nodeHttpExample from '../../examples/dashboard/node-http.ts';
import { sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { cookiesOf, csrfOf, TOKEN } from '../dashboard/support.ts';

const fixture = sqliteInbox();
const options = { inbox: fixture.inbox, auth: { token: TOKEN } };
afterAll(() => fixture.dispose());

type Send = (path: string, init?: RequestInit) => Promise<Response>;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const ORIGIN = 'http://dashboard.example';
async function onNode(server: Server): Promise<Send> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return overSocket(base);
}
/** Over a real socket, where the page's origin is the server's own address. */
const overSocket = (base: string): Send => (path, init = {}) => {
  const headers = { ...(init.headers as Record<string, string>) };
  if (headers.origin === ORIGIN) headers.origin = base;
  return fetch(`${base}${path}`, { redirect: 'manual', ...init, headers });
};
const onFetch = (handler: (request: Request) => Response | Promise<Response>): Send => async (path, init = {}) => handler(new Request(`${ORIGIN}${path}`, { redirect: 'manual', ...init }));

const EXAMPLES: Array<[string, () => Promise<Send>]> = [
  ['express', async () => onNode((await import('node:http')).createServer(expressExample.createApp(options)))],
  ['node-http', async () => onNode(nodeHttpExample.createApp(options))],
  [
    'fastify',
    async () => {
      const app = fastifyExample.createApp(options);
      await app.listen({ port: 0, host: '127.0.0.1' });
      closers.push(() => app.close());
      return overSocket(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    },
  ],
  [
    'hono',
    async () => {
      // One app, as a server makes it: sign-in sessions live in the dashboard that made them.
      const app = honoExample.createApp(options);
      return onFetch((request) => app.fetch(request));
    },
  ],
  [
    'nextjs-route',
    async () => {
      const routes = nextjsExample.createDashboardRoutes(options);
      return onFetch((request) => (request.method === 'POST' ? routes.POST(request) : routes.GET(request)));
    },
  ],
];

describe.each(EXAMPLES)('the %s example', (_name, start) => {
  test('signs in under /integration, shows the overview and takes an action with its CSRF token', async () => {
    const send = await start();
    expect((await send('/integration/')).status).toBe(401);
    const signIn = await send(`/integration/?token=${TOKEN}`);
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/integration/');
    let cookie = cookiesOf(signIn);
    const overview = await send('/integration/', { headers: { cookie } });
    expect(overview.status).toBe(200);
    cookie = [cookie, cookiesOf(overview)].join('; ');
    const page = await overview.text();
    expect(page).toContain('href="/integration/entries"');
    // A purge states its count first; with no dead entry its page has no form, so the POST is the
    // one that page would send for nothing to delete (days, the time it counted from, the count).
    const before = Date.now() - 31 * 24 * 3_600_000;
    const purge = await send('/integration/purge', {
      method: 'POST',
      body: `days=30&before=${before}&expected=0&csrf=${encodeURIComponent(csrfOf(page))}`,
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(purge.status).toBe(303);
    expect(purge.headers.get('location')).toBe('/integration/?done=purged&n=0');
    expect((await send('/integration/api/stats', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});
