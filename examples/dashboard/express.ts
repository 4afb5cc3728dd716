// The operator's dashboard in an Express app, under /integration.
//
//   npm run build   # once: examples import the package as a user would
//   DASHBOARD_TOKEN=$(openssl rand -hex 24) INBOX_PATH=./integration-inbox.db PORT=3000 node examples/dashboard/express.ts
//   then open http://localhost:3000/integration/?token=<DASHBOARD_TOKEN> once: a cookie keeps you in.
import express, { type Express } from 'express';
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';

export function createApp(options: Omit<DashboardOptions, 'basePath'>): Express {
  const app = express();
  const dashboard = createDashboard({ ...options, basePath: '/integration' });
  // The dashboard reads its own forms (a global express.urlencoded() before it is fine too).
  app.use('/integration', dashboard.node);
  app.get('/', (_request, response) => void response.send('Your app; the dashboard is at /integration/'));
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const { createInbox } = await import('integration-sdk/inbox');
  const { sqliteStore } = await import('integration-sdk/inbox/sqlite');
  const token = process.env.DASHBOARD_TOKEN;
  if (!token) throw new Error('Set DASHBOARD_TOKEN to a long random string.');
  const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET ?? 'whsec_unused_here', store: sqliteStore({ path: process.env.INBOX_PATH ?? './integration-inbox.db' }) });
  const port = Number(process.env.PORT ?? 3000);
  createApp({ inbox, auth: { token } }).listen(port, '127.0.0.1', () => console.log(`dashboard on http://localhost:${port}/integration/`));
}
