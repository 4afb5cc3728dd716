// The sandbox with many merchants (one key each, rate limits off) and a receiver answering 204 to
// its deliveries, in their own process, so that their memory is not counted against the tenants
// process measured. argv[2]: the number of merchants. Writes the keys to argv[3] (a JSON file: too
// many for one line of stdout to be comfortable) and prints { url, receiverUrl }.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox } from 'integration-sdk/sandbox';

const count = Number(process.argv[2] ?? '10000');
const keysFile = process.argv[3] ?? '';
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(204).end());
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const sandbox = await createSandbox({ rate: false, timeScale: 0.001, merchants: Array.from({ length: count }, () => ({})) });
writeFileSync(keysFile, JSON.stringify(sandbox.merchants.map((merchant) => merchant.keys[0]!.apiKey)));
console.log(JSON.stringify({ url: sandbox.url, receiverUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}` }));
process.on('SIGTERM', () => {
  receiver.close();
  void sandbox.close().then(() => process.exit(0));
});
