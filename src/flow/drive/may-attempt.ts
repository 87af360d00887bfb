/**
 * The platform's `mayAttempt` (client-api.ts): asked before every attempt,
 * the one the write-ahead starts included (start-at-once.ts), so it stays
 * with the loop, not in the later round's chunk.
 */
import type { OperationRecord } from '../../model.js';
import type { Engine } from '../engine/engine.js';

/**
 * The platform's `mayAttempt` lets `record` go now. Asked on every pass, so
 * after every wait (each comes back to before-attempt.ts as `again`): a
 * user who signs out during a retry delay stops the attempt.
 */
export function mayAttemptNow(engine: Engine, record: OperationRecord): boolean {
  if (engine.mayAttempt === undefined) return true;
  try {
    return engine.mayAttempt(record) === true;
  } catch {
    // A check that fails (the app's `user()` threw) lets nothing go: held back, looked at again later.
    return false;
  }
}
