/**
 * The TanStack Query demo: a React page (`@tanstack/react-query`) that pays
 * through `oncely/tanstack-query` against the reference idempotent server.
 * oncely keeps the payment (IndexedDB) and sends it once; TanStack shows it.
 *
 * Run: npx tsx examples/tanstack-query/main.ts   (PORT=0 picks a free port)
 */
import { launchDemo } from '../web-demo/launch.js';
import { startTanstackDemo } from './server.js';

await launchDemo({
  defaultPort: 4310,
  command: 'npx tsx examples/tanstack-query/main.ts',
  start: (port) => startTanstackDemo({ port }),
  banner: (demo) => `oncely + TanStack Query demo

  Open  ${demo.url}
  API   ${demo.referenceServer.url}  (the reference idempotent server: its ledger is the proof)

Things to try:
  - Switch "Offline" on, pay, reload the page: the payment is still in the outbox
    (IndexedDB), the old mutation is gone (idle), nothing was sent.
  - Switch "Offline" off: it goes out once; the handler registered for ['pay']
    shows the receipt, though the page that clicked Pay is gone.
  - Pay again for the same order: the same key, still one charge.

Ctrl-C to stop.`,
});
