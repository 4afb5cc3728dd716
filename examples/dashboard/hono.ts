// The operator's dashboard in a Hono app, under /integration: its Fetch handler takes the request
// as it is (the path keeps its /integration prefix, which the dashboard expects).
//
//   npm run build   # once: examples import the package as a user would
//   DASHBOARD_TOKEN=$(openssl rand -hex 24) INBOX_PATH=./integration-inbox.db PORT=3000 node examples/dashboard/hono.ts
import { Hono } from 'hono';
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';

export function createApp(options: Omit<DashboardOptions, 'basePath'>): Hono {
  const app = new Hono();
  const dashboard = createDashboard({ ...options, basePath: '/integration' });
  // The untouched request, path and all (app.mount('/integration', dashboard.fetch) works too).
  app.all('/integration', (c) => dashboard.fetch(c.req.raw));
  app.all('/integration/*', (c) => dashboard.fetch(c.req.raw));
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const { serve } = await import('@hono/node-server');
  const { createInbox } = await import('integration-sdk/inbox');
  const { sqliteStore } = await import('integration-sdk/inbox/sqlite');
  const token = process.env.DASHBOARD_TOKEN;
  if (!token) throw new Error('Set DASHBOARD_TOKEN to a long random string.');
  const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET ?? 'whsec_unused_here', store: sqliteStore({ path: process.env.INBOX_PATH ?? './integration-inbox.db' }) });
  const port = Number(process.env.PORT ?? 3000);
  serve({ fetch: createApp({ inbox, auth: { token } }).fetch, port, hostname: '127.0.0.1' }, () => console.log(`dashboard on http://localhost:${port}/integration/`));
}
