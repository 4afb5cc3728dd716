// The SDK's sandbox in its own process, so that its state and CPU are not counted against the
// client measured. argv[2]: the `rate` option as JSON (`false` turns its buckets off).
import { createSandbox, type RateOptions } from 'integration-sdk/sandbox';

const rate = JSON.parse(process.argv[2] ?? 'false') as RateOptions;
const sandbox = await createSandbox({ rate });
console.log(JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey, keys: sandbox.keys, storeIds: sandbox.storeIds }));
process.on('SIGTERM', () => {
  void sandbox.close().then(() => process.exit(0));
});
