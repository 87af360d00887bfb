/**
 * The checkout web demo: a page that pays through `oncely/browser` against
 * the reference idempotent server, with an offline switch, "fail the next
 * responses", a live timeline from `client.subscribe()` and the server's
 * ledger as the proof that every payment took effect exactly once.
 *
 * Run: npm run demo:web          (PORT=0 npm run demo:web picks a free port)
 */
import { startCheckoutDemo } from './server.js';

const DEFAULT_PORT = 4300;
const port = process.env.PORT === undefined || process.env.PORT === '' ? DEFAULT_PORT : Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT=${process.env.PORT} is not a port number`);
  process.exit(1);
}

let demo: Awaited<ReturnType<typeof startCheckoutDemo>>;
try {
  demo = await startCheckoutDemo({ port });
} catch (error) {
  const inUse = (error as { code?: unknown }).code === 'EADDRINUSE';
  console.error(
    inUse
      ? `Port ${port} is in use. Try another one: PORT=0 npm run demo:web`
      : `The demo could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}

console.log(`oncely checkout demo

  Open  ${demo.url}
  API   ${demo.referenceServer.url}  (the reference idempotent server: its ledger is the proof)

Things to try:
  - Pay, then double-click Pay on a new order: one key, one charge.
  - "Fail the next responses" → charge, then lose the response; pay: the client
    times out, resends the same key, the server replays its stored answer.
  - Switch "Offline" on, pay twice, switch it off: both go out once.
  - Reload in the middle of anything: the queue lives in IndexedDB.
  - Open ${demo.url}?sw=1, go offline in devtools, pay, close the tab, go back
    online: the service worker sends it (Chromium's Background Sync).

Ctrl-C to stop.`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  console.log('\nStopping…');
  demo.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
