/**
 * The record of a stop: settled (`settleStopped`), or abandoned by
 * `clear()` (`abandon`). Only the modules that build a stop need them (the
 * next step's chunk, the later rounds' chunk, `clear()`'s; see stop.ts), so
 * they travel with those and a page whose first send simply succeeds never
 * downloads them. Pure, like every change in transitions.ts; it imports only
 * types: what it uses of the client's modules comes in the kit.
 */
import type { OperationRecord, StoredAnswer, StoredFailure } from '../../model.js';
import type { AttemptEnd, endLast } from './attempt-history.js';
import type { Stop } from './decide.js';
import type { revise } from './revise.js';

/** What these changes use of the client's modules, handed over (`NEXT_STEP_KIT`, or the browser client's). */
export interface SettleKit {
  revise: typeof revise;
  endLast: typeof endLast;
}

/**
 * Terminal stop, with the reason and what to do next, and the server's last
 * answer when it was a non-2xx response (`answer`); the lease is released.
 */
export function settleStopped(
  kit: SettleKit,
  record: OperationRecord,
  stop: Stop,
  nowMs: number,
  retainMs: number,
  end?: AttemptEnd,
  answer?: StoredAnswer,
): OperationRecord {
  const failure: StoredFailure = {
    reason: stop.reason,
    message: stop.message,
    remediation: stop.remediation,
    mayHaveTakenEffect: stop.mayHaveTakenEffect,
  };
  if (stop.status !== undefined) failure.status = stop.status;
  if (stop.class !== undefined) failure.class = stop.class;
  if (answer !== undefined) failure.response = answer;
  return kit.revise(
    record,
    {
      state: stop.state,
      attempts: end === undefined ? record.attempts : kit.endLast(record, end),
      failure,
      retainUntil: nowMs + retainMs,
    },
    'lease',
  );
}

/**
 * A pending record removed by the app (e.g. `clear()` at sign-out): settled
 * as `aborted` and fenced (epoch bumped) in one write, so no loop can start
 * an attempt on it before it is deleted. Any other state is returned
 * unchanged (an in-flight record is left to its owner).
 */
export function abandon(kit: SettleKit, record: OperationRecord, stop: Stop, nowMs: number): OperationRecord {
  if (record.state !== 'pending') return record;
  const settled = settleStopped(kit, record, stop, nowMs, 0);
  return kit.revise(settled, { epoch: record.epoch + 1 });
}
