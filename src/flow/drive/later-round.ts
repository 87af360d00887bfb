/**
 * What the loop needs only in rounds a plain first send never reaches: the
 * claim of a stored operation and the wait for another owner
 * (claim-round.ts), the trimming of a full history (trim-attempts.ts), the full look before an attempt (before-attempt.ts: a plain round's is
 * first-look.ts), the wait for a retry's time (a retry, or a stored
 * operation not yet due), the
 * `headers` callback and `onUnauthorized` under the deadline (waits.ts), and
 * the attempt a failed `headers` callback stands for. Loaded with
 * `import()` (later-round-load.ts): by the first round that needs it, in the
 * background after an answer, at once by a client with a `headers`
 * callback. It imports only types of the loop's modules: what it uses of
 * them comes in the kit, so no chunk is shared with the client.
 */
import type { AttemptOutput } from './attempt.js';

export { settleStopped } from '../decide/settle-stop.js';
export { stopAborted } from '../decide/stop.js';
export { dropOldAttempts } from '../decide/trim-attempts.js';
export { beforeAttempt } from './before-attempt.js';
export { claimToDrive, waitForOwner } from './claim-round.js';
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
