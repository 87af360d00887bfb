/** The server contract on the memory store (injected clock), both styles. */
import { memoryIdempotencyStore } from '../../src/server.js';
import { contractSuite } from './contract-suite.js';
import { startApp } from './fixture.js';

contractSuite('memory store', (style) => {
  const clock = { now: 1_000_000 };
  return startApp(style, {
    store: memoryIdempotencyStore({ now: () => clock.now }),
    advance: async (ms) => {
      clock.now += ms;
    },
  });
});
