/**
 * Demo helper: a process that starts a payment and is killed mid-flight by
 * the demo (SIGKILL) after the server charged but before it answered.
 *
 * Usage: node --import tsx crash-child.ts <storeDir> <apiUrl> <key>
 */
import { createClient } from 'oncely';
import { fileStore } from 'oncely/node';

const [dir, api, key] = process.argv.slice(2);
if (dir === undefined || api === undefined || key === undefined) process.exit(2);
const client = createClient({
  baseUrl: api,
  store: fileStore({ dir }),
  owner: 'demo-process-1',
  leaseMs: 300,
  policy: { attemptTimeoutMs: 800 },
});
client.on('attempt:started', () => console.log('sent'));
await client.send({
  method: 'POST',
  url: '/payments',
  key,
  json: { orderId: 'pay-crash', amount: 9_900, currency: 'EUR' },
});
