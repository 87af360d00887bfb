/**
 * A stop and its remediation texts: imported only by the modules that stop
 * an operation, all loaded on need (the next step's chunk, the later
 * rounds' chunk, `clear()`), so a page whose first send simply succeeds
 * never downloads them before that send leaves (issue 33). A chunk that
 * cannot load stops nothing: its loader leaves the operation pending, with
 * its key. It imports only types: "may have taken effect" (decide.ts, which
 * the send path needs) comes from the caller's kit, so no chunk is shared
 * with the client.
 */
import type { OperationRecord, StopReason } from '../../model.js';
import type { Classification } from './classify.js';
import type { Stop } from './decide.js';

/** What a stop needs of the client's code: the one judgement of "may have taken effect" (decide.ts). */
export interface StopKit {
  mayHaveTakenEffect: (record: OperationRecord) => boolean;
}

/** The message of a stop by the caller's abort. */
export const CALLER_ABORTED = 'The caller aborted the operation';

/** The stop of an operation whose caller aborted it. */
export function stopAborted(kit: StopKit, record: OperationRecord, c?: Pick<Classification, 'status' | 'class'>): Stop {
  return stopWith(kit, record, 'aborted', CALLER_ABORTED, c);
}

/**
 * A stop in the right terminal state: `blocked` for a correctable refusal;
 * otherwise `unknown` when any attempt may have taken effect (an operation
 * that may have happened never ends as `failed`), else `failed`.
 */
export function stopWith(
  kit: StopKit,
  record: OperationRecord,
  reason: StopReason,
  message: string,
  c?: Pick<Classification, 'status' | 'class'>,
): Stop {
  const maybe = kit.mayHaveTakenEffect(record);
  const state = reason === 'correctable' ? 'blocked' : maybe ? 'unknown' : 'failed';
  return {
    kind: 'stop',
    state,
    reason,
    message,
    mayHaveTakenEffect: maybe,
    remediation: remediationFor(state, c?.status, maybe),
    status: c?.status,
    class: c?.class,
  };
}

/** What to do next. Never "send it again" or "discard" when an attempt may have taken effect. */
export function remediationFor(state: Stop['state'], status: number | undefined, maybe: boolean): string {
  switch (state) {
    case 'blocked': {
      const fix = `Fix the ${status === 401 || status === 403 ? 'credentials or permissions' : 'request'}, then retry(key) (same key)`;
      return maybe
        ? `An earlier attempt may have taken effect: look it up at the provider by its key first. ${fix}. Do not discard it for a new operation: that could do it twice.`
        : `${fix}, or discard(key).`;
    }
    case 'failed':
      return 'No attempt took effect: send it again as a new operation when ready.';
    case 'unknown':
      return 'It may have taken effect: look it up at the provider by its key to reconcile, or retry(key) (same key, deduplicated).';
  }
}
