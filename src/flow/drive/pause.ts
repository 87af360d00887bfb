/**
 * The loop's one way to sleep: through the runtime, cut short by the
 * caller's signal, the client's shutdown or a wake-up. Kept apart from the
 * other waits (waits.ts, in the later round's chunk): every path sleeps
 * through it, the first send's included (a held-back operation's look
 * again, a lease to wait out).
 */
import type { Engine } from '../engine/engine.js';
import { onAbort } from '../transport/abort.js';

/**
 * Sleeps through the runtime. Resolves `true` when the time passed, `false`
 * when interrupted by the caller's signal, the client's shutdown or `wake`.
 */
export async function pause(engine: Engine, ms: number, signal?: AbortSignal, wake?: AbortSignal): Promise<boolean> {
  if (engine.shutdown.stopped || signal?.aborted === true || wake?.aborted === true) return false;
  const interrupt = new AbortController();
  const stop = (): void => interrupt.abort();
  const unsubscribe = [
    engine.shutdown.onStop(stop),
    ...[signal, wake].filter((s): s is AbortSignal => s !== undefined).map((s) => onAbort(s, stop)),
  ];
  try {
    await engine.runtime.sleep(Math.max(0, ms), interrupt.signal);
    return true;
  } catch {
    return false;
  } finally {
    for (const off of unsubscribe) off();
  }
}
