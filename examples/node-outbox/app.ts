/**
 * The app side of the outbox example: a Node process with a durable file
 * store. `enqueue` mode buffers actions while the API is down (every attempt
 * is refused before anything is sent, so no attempt is counted); `drain`
 * mode is the same app after a restart, resuming them with their first keys.
 *
 * Usage: tsx app.ts <enqueue|drain> <storeDir> <apiUrl>
 */
import { createClient } from 'oncely';
import { fileStore } from 'oncely/node';

const [mode, dir, api] = process.argv.slice(2);
if ((mode !== 'enqueue' && mode !== 'drain') || dir === undefined || api === undefined) {
  console.error('usage: app.ts <enqueue|drain> <storeDir> <apiUrl>');
  process.exit(2);
}

const client = createClient({
  baseUrl: api,
  store: fileStore({ dir }),
  // A stable owner for this single-instance worker: after a crash the restarted
  // process reclaims its own operations at once instead of waiting for their
  // leases to expire (run several workers? give each its own owner id).
  owner: 'outbox-worker-1',
  // An outbox tolerates long outages: a long deadline, short waits between tries.
  policy: { deadlineMs: 60 * 60_000, backoff: { baseDelayMs: 100, maxDelayMs: 500 } },
});

if (mode === 'enqueue') {
  for (const [i, action] of ['signup', 'subscribe', 'invoice', 'charge', 'receipt'].entries()) {
    const { key } = await client.enqueue({
      method: 'POST',
      url: '/actions',
      key: `outbox-${action}`,
      json: { action, seq: i },
    });
    console.log(`buffered ${action} key=${key}`);
  }
  // Keep trying (the API is down) until the process is stopped.
  client.on('attempt:ended', (e) => console.log(`attempt ${e.attempt} for ${e.key}: ${e.class}`));
} else {
  // Each outcome is reported as it settles; resume() itself resolves with counts only.
  const summary = await client.resume({
    // `attempts` counts what may have reached the server; tries refused before it (the API down) are `notSent`.
    onOutcome: (o) =>
      console.log(`drained ${o.key}: ${o.state} after ${o.attempts} attempt(s) (${o.notSent} not sent)`),
  });
  await client.close();
  process.exit(summary.succeeded === summary.driven ? 0 : 1);
}
