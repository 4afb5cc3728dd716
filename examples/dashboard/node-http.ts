// The operator's dashboard on plain node:http, under /integration, beside the rest of a server.
//
//   npm run build   # once: examples import the package as a user would
//   DASHBOARD_TOKEN=$(openssl rand -hex 24) INBOX_PATH=./integration-inbox.db PORT=3000 node examples/dashboard/node-http.ts
import { createServer, type Server } from 'node:http';
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';

export function createApp(options: Omit<DashboardOptions, 'basePath'>): Server {
  const dashboard = createDashboard({ ...options, basePath: '/integration' });
  return createServer((request, response) => {
    if (request.url === '/integration' || request.url?.startsWith('/integration/') || request.url?.startsWith('/integration?')) return dashboard.node(request, response);
    response.writeHead(404).end('not found');
  });
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
