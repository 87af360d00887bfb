/**
 * A holder checks its own lease on its monotonic clock right before the
 * bytes leave (DESIGN.md principle 13). Fencing refuses a stale owner's
 * writes, but not its sends: a process paused (SIGSTOP, a debugger, a
 * machine asleep) between its durable "attempt started" and the send would
 * otherwise send after another owner took the operation over, maybe after
 * it settled it.
 *
 * The lease an attempt's start writes lasts the attempt's timeout plus
 * `leaseMs`, and a taker waits at least that long plus a margin after it
 * first saw it (flow/engine/lease-watch.ts). An attempt sent within
 * `leaseMs` of that write ends, at the latest, a timeout later: inside the
 * lease, with the taker's margin to spare. Sent any later, it could overlap
 * a taker's, so it is given back unsent instead.
 */
import type { Runtime } from '../../runtime.js';

/** The attempt's start was written at `writtenAtMono` (read before the write began, so never late). */
export function leaseStillOurs(
  runtime: Pick<Runtime, 'monotonicNow'>,
  leaseMs: number,
  writtenAtMono: number,
): () => boolean {
  return () => runtime.monotonicNow() - writtenAtMono < leaseMs;
}
