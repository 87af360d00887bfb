/**
 * The loop's later rounds: what stands before an attempt that the write
 * which gave the loop its operation did not start (before-attempt.ts: the
 * caller's abort, shutdown, the deadline, the retry delay, the network, the
 * host's budget), the `headers` callback and `onUnauthorized` under the
 * deadline, and their waits (waits.ts). A first send that starts its
 * attempt with its write-ahead needs none of it: loaded with `import()`
 * (later-round-load.ts). It imports only types of the loop's modules: what
 * it uses of them comes in the kit, so no chunk is shared with the client.
 */
export { beforeAttempt } from './before-attempt.js';

import type { AttemptOutput } from './attempt.js';

export { callHook, withCredentials } from './waits.js';

/** The `headers` callback threw: the attempt was never sent (retried until the deadline, attempts untouched). */
export function credentialsFailed(error: unknown): AttemptOutput {
  const message = error instanceof Error ? error.message : String(error);
  return {
    observation: {
      kind: 'transport_error',
      sent: 'not',
      code: 'CREDENTIALS',
      message: `headers callback failed: ${message}`,
    },
    headers: {},
    bytes: undefined,
  };
}
