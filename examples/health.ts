// Checks the key and the environment: the first call of every integration (spec part 1).
//
//   INTEGRATION_API_KEY=service_... INTEGRATION_BASE_URL=https://... node examples/health.ts   (the sandbox prints both: npx integration-sdk sandbox)
import { AuthenticationError, FeatureDisabledError, IntegrationClient } from 'integration-sdk';

const client = new IntegrationClient({
  apiKey: process.env.INTEGRATION_API_KEY ?? '',
  baseUrl: process.env.INTEGRATION_BASE_URL ?? '',
  logger: process.env.DEBUG ? console : undefined,
});

try {
  const health = await client.health();
  console.log(`status ${health.status}, merchant ${health.merchant_id}`);
  console.log(`scopes: ${health.scopes.join(', ')}`);
  console.log(`stores: ${health.store_ids.length === 0 ? 'all stores of the merchant' : health.store_ids.join(', ')}`);
} catch (error) {
  if (error instanceof AuthenticationError) console.error('The key was refused: missing, revoked or rotated. Create a new one in the dashboard.');
  else if (error instanceof FeatureDisabledError) console.error('The integration is not enabled for this merchant yet.');
  else throw error;
  process.exitCode = 1;
}
