/**
 * Per-endpoint policy: one client, three endpoints, three behaviours.
 *
 * - POST /v1/payments — Stripe profile, long deadline, more attempts:
 *   a 409 `idempotency_key_in_use` means "still running", so it waits and retries.
 * - POST /messages — IETF profile: a key reused with another payload is a 422
 *   conflict, a permanent failure (never a second message).
 * - GET /catalog/** — a read: no idempotency key, short deadline and timeout.
 *
 * Run: npx tsx examples/per-endpoint-policy/main.ts
 */
import { createClient, isOncelyError, memoryStore } from 'oncely';
import { startReferenceServer } from 'oncely/testing';

const payments = await startReferenceServer({ profile: 'stripe' });
const messaging = await startReferenceServer({ profile: 'ietf' });

const endpoints = {
  'POST /v1/payments': { profile: 'stripe' as const, deadlineMs: 10 * 60_000, maxAttempts: 8 },
  'POST /messages': { profile: 'ietf' as const, deadlineMs: 30_000 },
  'GET /catalog/**': { sendKey: false, deadlineMs: 2_000, attemptTimeoutMs: 300, budget: false as const },
};
const policy = { backoff: { baseDelayMs: 50 }, retryAfter: { jitterMs: 100 } };
const client = createClient({ policy, endpoints });

console.log('How requests match the rules (the most specific pattern wins):');
for (const [method, url] of [
  ['POST', `${payments.url}/v1/payments`],
  ['POST', `${messaging.url}/messages`],
  ['GET', `${payments.url}/catalog/shoes/42`],
  ['POST', `${payments.url}/v1/refunds`],
] as const) {
  const p = client.policyFor(method, url);
  const key = (p.sendKey ?? !['GET', 'HEAD', 'OPTIONS'].includes(method)) ? p.profile.keyHeader : 'no key';
  console.log(
    `  ${method.padEnd(4)} ${new URL(url).pathname.padEnd(20)} → ${p.name.padEnd(18)} profile=${p.profile.name.padEnd(6)} deadline=${p.deadlineMs} ms  attempts=${p.maxAttempts}  header=${key}`,
  );
}

const checks: Array<[string, boolean]> = [];

// 1. Stripe: the first attempt finds the key still in use (409), the retry completes.
payments.script({
  kind: 'status',
  status: 409,
  body: { error: { type: 'idempotency_error', code: 'idempotency_key_in_use', message: 'in use' } },
});
const payment = await client.send({
  method: 'POST',
  url: `${payments.url}/v1/payments`,
  json: { amount: 4800, currency: 'eur' },
});
const paymentRecord = await client.get(payment.key);
console.log(`\npayment ${payment.key}: ${paymentRecord?.attempts.map((a) => a.class).join(' → ')}`);
checks.push(['payment: 409 in use was retried, then completed', paymentRecord?.attempts[0]?.class === 'in_progress']);
checks.push(['payment: one effect', payments.ledger.effectCount(payment.key) === 1]);

// 2. IETF: another device reuses the key with another payload → 422, permanent, no second message.
const message = await client.send({
  method: 'POST',
  url: `${messaging.url}/messages`,
  json: { to: 'ada', text: 'Your order shipped' },
});
const otherDevice = createClient({ policy, endpoints, store: memoryStore() });
const conflict = await otherDevice
  .send({
    method: 'POST',
    url: `${messaging.url}/messages`,
    key: message.key,
    json: { to: 'ada', text: 'Something else' },
  })
  .catch((error: unknown) => error);
// Refused for good, and never "not done": the provider holds another message under this key, which may have
// done what this one asks, so the operation ends `unknown` (look it up by its key) rather than `failed`.
const refused = isOncelyError(conflict) && conflict.state === 'unknown' && conflict.reason === 'permanent';
console.log(
  `message ${message.key}: reuse with another payload → ${isOncelyError(conflict) ? conflict.message : 'sent!'}`,
);
checks.push(['message: key reuse with another payload refused (422, permanent, ends unknown)', refused]);
checks.push(['message: one effect', messaging.ledger.effectCount(message.key) === 1]);

// 3. Catalog: a slow answer times out after 300 ms and is retried; no key header on reads.
// Reads send no key, so they are not stored (nothing to resume them by): the events show their attempts.
payments.script({ kind: 'delay', ms: 600, match: { method: 'GET' } });
const catalogAttempts: string[] = [];
const stopWatching = client.on('attempt:ended', (e) => {
  if (e.operation.startsWith('GET ')) catalogAttempts.push(e.class);
});
const catalog = await client.send({ method: 'GET', url: `${payments.url}/catalog/shoes/42` });
stopWatching();
const gets = payments.ledger.requests.filter((r) => r.method === 'GET');
console.log(
  `catalog: ${catalogAttempts.join(' → ')} (${catalog.status}), stored: ${(await client.get(catalog.key)) !== undefined}, key header sent: ${gets.some((r) => r.key !== undefined)}`,
);
checks.push([
  'catalog: timed out at 300 ms, retried, completed',
  catalogAttempts[0] === 'ambiguous' && catalogAttempts.at(-1) === 'completed' && catalog.status === 200,
]);
checks.push(['catalog: no idempotency key on reads', gets.length >= 1 && gets.every((r) => r.key === undefined)]);

console.log('');
for (const [what, ok] of checks) console.log(`  ${ok ? '✔' : '✘'} ${what}`);
await Promise.all([client.close(), otherDevice.close(), payments.close(), messaging.close()]);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
