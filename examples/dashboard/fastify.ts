// The operator's dashboard in a Fastify 5 app, under /integration.
//
//   npm run build   # once: examples import the package as a user would
//   DASHBOARD_TOKEN=$(openssl rand -hex 24) INBOX_PATH=./integration-inbox.db PORT=3000 node examples/dashboard/fastify.ts
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createDashboard, type DashboardOptions } from 'integration-sdk/dashboard';

export function createApp(options: Omit<DashboardOptions, 'basePath'>): FastifyInstance {
  const app = Fastify();
  const dashboard = createDashboard({ ...options, basePath: '/integration' });
  // Fastify hands the raw request and response over; hijack() tells it the reply is taken care of.
  const handle = (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    dashboard.node(request.raw, reply.raw);
  };
  // Inside this plugin only, bodies are left unread: the dashboard reads its own forms. Every other
  // route keeps Fastify's parsers (plugins are encapsulated).
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.all('/integration', handle);
    scope.all('/integration/*', handle);
  });
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const { createInbox } = await import('integration-sdk/inbox');
  const { sqliteStore } = await import('integration-sdk/inbox/sqlite');
  const token = process.env.DASHBOARD_TOKEN;
  if (!token) throw new Error('Set DASHBOARD_TOKEN to a long random string.');
  const inbox = createInbox({ secret: process.env.WEBHOOK_SECRET ?? 'whsec_unused_here', store: sqliteStore({ path: process.env.INBOX_PATH ?? './integration-inbox.db' }) });
  const port = Number(process.env.PORT ?? 3000);
  await createApp({ inbox, auth: { token } }).listen({ port, host: '127.0.0.1' });
  console.log(`dashboard on http://localhost:${port}/integration/`);
}
