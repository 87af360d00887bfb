/**
 * The checkout web demo: a page that pays through `oncely/browser` against
 * the reference idempotent server, with an offline switch, "fail the next
 * responses", a live timeline from `client.subscribe()` and the server's
 * ledger as the proof that every payment took effect exactly once.
 *
 * Run: npm run demo:web          (PORT=0 npm run demo:web picks a free port)
 */
import { launchDemo } from '../web-demo/launch.js';
import { startCheckoutDemo } from './server.js';

await launchDemo({
  defaultPort: 4300,
  command: 'npm run demo:web',
  start: (port) => startCheckoutDemo({ port }),
  banner: (demo) => `oncely checkout demo

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

Ctrl-C to stop.`,
});
