// Mounted under its basePath by a router that keeps the path or by one that strips it (Hono's
// app.mount, a node:http server handing over a sub-path): every link, redirect and form still works.
import { Hono } from 'hono';
import { afterAll, expect, it } from 'vitest';
import { createDashboard } from 'integration-sdk/dashboard';
import { sqliteInbox } from '../inbox/support/inbox-fixture.ts';
import { cookiesOf, csrfOf, listen, TOKEN } from './support.ts';

const fixture = sqliteInbox();
afterAll(() => fixture.dispose());
const dashboard = createDashboard({ inbox: fixture.inbox, auth: { token: TOKEN }, basePath: '/ops' });

it("works behind Hono's app.mount, which strips the mount path", async () => {
  const app = new Hono();
  app.mount('/ops', dashboard.fetch);
  const signIn = await app.request(`/ops/entries?token=${TOKEN}`);
  expect(signIn.status).toBe(303);
  expect(signIn.headers.get('location')).toBe('/ops/entries');
  let cookie = cookiesOf(signIn);
  const page = await app.request('/ops/', { headers: { cookie } });
  expect(page.status).toBe(200);
  cookie = `${cookie}; ${cookiesOf(page)}`;
  const html = await page.text();
  expect(html).toContain('href="/ops/entries"');
  const retryDead = await app.request('/ops/retry-dead', {
    method: 'POST',
    body: `expected=0&csrf=${encodeURIComponent(csrfOf(html))}`,
    headers: { cookie, origin: 'http://localhost', 'content-type': 'application/x-www-form-urlencoded' },
  });
  expect(retryDead.status).toBe(303);
  expect(retryDead.headers.get('location')).toBe('/ops/?done=retry-dead&n=0');
});

it('works on node:http whether the server hands over the full path or the part under the mount', async () => {
  const server = await listen((request, response) => {
    if (request.url?.startsWith('/stripped/')) request.url = request.url.slice('/stripped'.length);
    dashboard.node(request, response);
  });
  try {
    for (const path of ['/ops/api/stats', '/stripped/api/stats']) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.status, path).toBe(200);
    }
    expect((await fetch(`${server.url}/ops/api/stats`)).status).toBe(401);
  } finally {
    await server.close();
  }
});

it('takes a form that express.urlencoded() already read', async () => {
  const express = (await import('express')).default;
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.use('/ops', dashboard.node);
  const server = await listen(app);
  try {
    const signIn = await fetch(`${server.url}/ops/?token=${TOKEN}`, { redirect: 'manual' });
    let cookie = cookiesOf(signIn);
    const page = await fetch(`${server.url}/ops/`, { headers: { cookie } });
    cookie = `${cookie}; ${cookiesOf(page)}`;
    const retryDead = await fetch(`${server.url}/ops/retry-dead`, {
      method: 'POST',
      redirect: 'manual',
      body: `expected=0&csrf=${encodeURIComponent(csrfOf(await page.text()))}`,
      headers: { cookie, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(retryDead.status).toBe(303);
    expect(retryDead.headers.get('location')).toBe('/ops/?done=retry-dead&n=0');
  } finally {
    await server.close();
  }
});
