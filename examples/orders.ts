// Reads orders back for reconciliation: by id, and by the marketplace's own order id.
//
//   INTEGRATION_API_KEY=... INTEGRATION_BASE_URL=... node examples/orders.ts <order_id> [external_order_id]
import { IntegrationClient, NotFoundError } from 'integration-sdk';

const [orderId, externalOrderId] = process.argv.slice(2);
if (!orderId) {
  // There is no route that lists orders: they arrive by webhook, and are read back by id.
  console.error(
    'usage: node examples/orders.ts <order_id> [external_order_id]\n' +
      'order_id: data.order_id of an order.created delivery (against the sandbox, `npx integration-sdk sandbox order create` makes an order and prints it);\n' +
      "external_order_id: a marketplace's own id, looked up with findByExternalId.",
  );
  process.exit(2);
}
const client = new IntegrationClient({ apiKey: process.env.INTEGRATION_API_KEY ?? '', baseUrl: process.env.INTEGRATION_BASE_URL ?? '' });

try {
  const order = await client.orders.get(orderId);
  console.log(`#${order.display_number} ${order.status} via ${order.source_channel}: ${order.items.length} items, total ${order.totals.total}`);
} catch (error) {
  // Missing and "outside the key's stores" look the same: the service does not confirm existence.
  if (!(error instanceof NotFoundError)) throw error;
  console.error(`order ${orderId} not found (or outside the key's stores)`);
  process.exitCode = 1;
}

if (externalOrderId) {
  const order = await client.orders.findByExternalId(externalOrderId);
  console.log(order === null ? `no order for external id ${externalOrderId} yet` : `${externalOrderId} is order ${order.order_id}`);
}
