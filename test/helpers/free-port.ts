/**
 * A port on 127.0.0.1 that nothing listens on (bound once by the OS, then
 * closed): connecting to it is refused, which is how tests make an attempt
 * provably unsent.
 */
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}
