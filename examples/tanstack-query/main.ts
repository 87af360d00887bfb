/**
 * The TanStack Query demo: a React page (`@tanstack/react-query`) that pays
 * through `oncely/tanstack-query` against the reference idempotent server.
 * oncely keeps the payment (IndexedDB) and sends it once; TanStack shows it.
 *
 * Run: npx tsx examples/tanstack-query/main.ts   (PORT=0 picks a free port)
 */
import { startTanstackDemo } from './server.js';

const DEFAULT_PORT = 4310;
const port = process.env.PORT === undefined || process.env.PORT === '' ? DEFAULT_PORT : Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT=${process.env.PORT} is not a port number`);
  process.exit(1);
}

let demo: Awaited<ReturnType<typeof startTanstackDemo>>;
try {
  demo = await startTanstackDemo({ port });
} catch (error) {
  const inUse = (error as { code?: unknown }).code === 'EADDRINUSE';
  console.error(
    inUse
      ? `Port ${port} is in use. Try another one: PORT=0 npx tsx examples/tanstack-query/main.ts`
      : `The demo could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}

console.log(`oncely + TanStack Query demo

  Open  ${demo.url}
  API   ${demo.referenceServer.url}  (the reference idempotent server: its ledger is the proof)

Things to try:
  - Switch "Offline" on, pay, reload the page: the payment is still in the outbox
    (IndexedDB), the old mutation is gone (idle), nothing was sent.
  - Switch "Offline" off: it goes out once; the handler registered for ['pay']
    shows the receipt, though the page that clicked Pay is gone.
  - Pay again for the same order: the same key, still one charge.

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
