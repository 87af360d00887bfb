/**
 * A caller's write, end to end: admitted (written ahead), then answered from
 * the store if it had already settled, or driven until it settles.
 * `send` waits and rejects with a typed error; `enqueue` returns once the
 * write-ahead is done, with an outcome promise that never rejects.
 */
import { isTerminal } from '../model.js';
import type { ClientCore } from './core.js';
import type { OncelyRequest } from './operation.js';
import { guarded, type Outcome, outcomeOf, resultOf, type SendResult } from './settle.js';
import { suspendedError } from './settle-errors.js';

/** Sends once: the result, or a typed error (also when the caller stops waiting before it settles). */
export async function send<T>(core: ClientCore, request: OncelyRequest<T>): Promise<SendResult<T>> {
  const { record, fresh } = await core.admission.admit(request);
  if (!fresh && isTerminal(record.state)) return resultOf(record, request, true);
  // A record just written ahead is already claimed by this client: the loop need not read it back.
  const settled = await core.loops.driveToEnd(record.key, record.scope, request.signal, fresh ? record : undefined);
  if (!isTerminal(settled.state)) throw suspendedError(settled, request.signal?.aborted === true);
  return resultOf(settled, request, false);
}

/** Writes the operation ahead; `settled` follows and never rejects. */
export async function enqueue<T>(
  core: ClientCore,
  request: OncelyRequest<T>,
): Promise<{ key: string; settled: Promise<Outcome<T>> }> {
  const { record, fresh } = await core.admission.admit(request);
  const settled =
    !fresh && isTerminal(record.state)
      ? outcomeOf(record, request, true)
      : guarded(
          core.engine.store,
          record.key,
          core.loops
            .driveToEnd(record.key, record.scope, request.signal, fresh ? record : undefined)
            .then((r) => outcomeOf(r, request, false)),
        );
  return { key: record.key, settled };
}
