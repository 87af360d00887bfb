/**
 * The error of an operation whose loop ended before it settled, other than
 * by a stop of its own: something escaped the loop (the store failing after
 * a request may have left), the record was removed while it was driven
 * (`clear()`, `discard`), or it was not started behind the stuck head of its
 * scope. The verdict (whether it may have taken effect) is made here, by the
 * caller, from the record; the texts that explain it (interruption-texts.ts)
 * are loaded with `import()` only now: a page whose sends settle never
 * downloads them. If they cannot load, the caller still gets this
 * `OperationError`, with the same verdict, in shorter words.
 */
import { OperationError } from '../../errors.js';
import { GENERIC_REMEDIATION, STORED_REMEDIATION } from '../../model/remediation.js';
import type { OperationRecord } from '../../model.js';
import type { Runtime } from '../../runtime.js';
import { chunk } from './chunk.js';

export interface Interruption {
  /**
   * `interrupted`: an error escaped the loop (`why` names it); `removed`:
   * deleted from the store while driven; `held`: not started, the head of
   * its scope (`head`) having failed before it settled.
   */
  kind: 'interrupted' | 'removed' | 'held';
  key: string;
  /** The record as last known (as stored, when it could be read). */
  record: OperationRecord | undefined;
  /** Some attempt may have reached the server: decided by the caller, never by the texts. */
  maybe: boolean;
  /** `interrupted`: what failed, as the caller may quote it. */
  why?: string;
  /** `held`: the scope, and the key of its head. */
  scope?: string | undefined;
  head?: string | undefined;
  cause?: unknown;
}

const texts = chunk(() => import('./interruption-texts.js'));

export async function interruptionError(runtime: Pick<Runtime, 'track'>, v: Interruption): Promise<OperationError> {
  const { key, record } = v;
  const state = record?.state ?? 'pending';
  let cause = v.cause;
  let words: { message: string; remediation: string };
  try {
    words = (await texts.load(runtime)).interruptionText(v);
  } catch (error) {
    cause ??= error;
    words = {
      message: `Operation ${key} could not be driven (${state}): ${v.why ?? v.kind}`,
      // Removed from the store, it is not there to resume: only the generic step holds.
      remediation: v.kind === 'removed' ? GENERIC_REMEDIATION : STORED_REMEDIATION,
    };
  }
  return new OperationError(words.message, {
    key,
    state,
    history: record?.attempts,
    mayHaveTakenEffect: v.maybe,
    remediation: words.remediation,
    cause,
  });
}
