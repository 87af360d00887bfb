// Preamble of a block that runs in Node against `https://api.example.com` (a local reference server).
import { startReferenceServer as startServerOfSnippet } from 'oncely/testing';
import { check as checkSnippet, routeExampleApi as routeSnippetApi } from '../route.js';

const serverOfSnippet = await startServerOfSnippet();
routeSnippetApi(serverOfSnippet.url);

/** The block sent at least one operation, and each took effect once. */
export async function snippetDone(_exports: Record<string, unknown>): Promise<void> {
  // A block may end as soon as it enqueued: its operation is then on its way.
  for (let waitedMs = 0; serverOfSnippet.ledger.totalEffects() === 0 && waitedMs < 10_000; waitedMs += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const effects = [...serverOfSnippet.ledger.effects.values()];
  checkSnippet(effects.length > 0, 'the server saw an operation');
  checkSnippet(
    effects.every((n) => n === 1),
    'each operation took effect once',
  );
  await serverOfSnippet.close();
}
