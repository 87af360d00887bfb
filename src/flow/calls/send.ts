/**
 * flow/calls/: the public calls and what wires them: send and enqueue
 * (admission, settle), retry, discard and sweep (remediation), resume passes,
 * and the client's working parts (assembly, loaded lazily). The top of flow/:
 * it may import every stage; no other folder of flow/ imports it.
 *
 * A caller's write, end to end: admitted (written ahead), then answered from
 * the store if it had already settled, or driven until it settles.
 * `send` waits and rejects with a typed error; `enqueue` returns once the
 * write-ahead is done, with an outcome promise that never rejects.
 * Each call also starts the client's periodic sweep when it is due.
 */
import type { AnyOncelyError } from '../../errors.js';
import { isTerminal } from '../../model.js';
import type { OncelyRequest } from '../request/operation.js';
import type { AdmitOptions, Admitted } from './admission.js';
import { asCallerAbort } from './caller-abort.js';
import type { ClientCore } from './core.js';
import { guarded, type Outcome, outcomeOf, resultOf, type SendResult, schemaCheck, suspendedOf } from './settle.js';
import { liveProfile } from './settle-errors.js';

/**
 * `send`: the write-ahead is relaxed when it is only the write-ahead (the
 * caller is told nothing before the attempt's start, the durable write that
 * covers it), and is that start itself when the attempt can go at once.
 */
const SEND: AdmitOptions = { write: { durability: 'relaxed' }, startFirst: true };
/** `enqueue` returns once the write-ahead is durable: with attempt 1 started in it when it can go at once. */
const ENQUEUE: AdmitOptions = { startFirst: true };

/** Sends once: the result, or a typed error (also when the caller stops waiting before it settles). */
export async function send<T>(core: ClientCore, request: OncelyRequest<T>): Promise<SendResult<T>> {
  void core.remediation.sweepIfDue();
  const { record, fresh, held } = await core.admission.admit(request, SEND);
  prefetchSchemaCheck(core, request);
  try {
    if (!fresh && isTerminal(record.state))
      return await resultOf(record, request, true, liveProfile(core.engine.endpoints, record), core.engine.runtime);
    // A record just written ahead is already claimed by this client: the loop need not read it back.
    // (When the write-ahead started attempt 1, its loop is running already, and this joins it.)
    const written = fresh ? { record } : undefined;
    const settled = await core.loops.driveToEnd(record.key, record.scope, request.signal, written);
    if (!isTerminal(settled.state))
      throw await suspendedOf(settled, request.signal?.aborted === true, held, core.engine.runtime);
    return await resultOf(settled, request, false, liveProfile(core.engine.endpoints, settled), core.engine.runtime);
  } catch (error) {
    throw await asCallerAbort(error, request.signal, core.engine.runtime);
  } finally {
    release(core, record.key, held);
  }
}

/** Writes the operation ahead; `settled` follows and never rejects. */
export async function enqueue<T>(
  core: ClientCore,
  request: OncelyRequest<T>,
): Promise<{ key: string; settled: Promise<Outcome<T>> }> {
  void core.remediation.sweepIfDue();
  const { record, fresh, held }: Admitted = await core.admission.admit(request, ENQUEUE);
  prefetchSchemaCheck(core, request);
  const outcome =
    !fresh && isTerminal(record.state)
      ? outcomeOf(record, request, true, liveProfile(core.engine.endpoints, record), core.engine.runtime)
      : guarded(
          core.engine.store,
          record.key,
          core.loops
            .driveToEnd(record.key, record.scope, request.signal, fresh ? { record } : undefined)
            .then((r) => outcomeOf(r, request, false, liveProfile(core.engine.endpoints, r), core.engine.runtime)),
        );
  const settled = outcome.then(async (o) => {
    release(core, record.key, held);
    if (o.error === undefined) return o;
    return { ...o, error: (await asCallerAbort(o.error, request.signal, core.engine.runtime)) as AnyOncelyError };
  });
  return { key: record.key, settled };
}

/** A request with a `responseSchema`: its check (settle.ts) starts loading while the attempt is out. */
function prefetchSchemaCheck(core: ClientCore, request: OncelyRequest<unknown>): void {
  if (request.responseSchema !== undefined) void schemaCheck(core.engine.runtime).catch(() => undefined);
}

/** This caller has its answer: a record kept in memory for it may be forgotten (see flow/engine/placement.ts). */
function release(core: ClientCore, key: string, held: boolean): void {
  if (held) core.engine.store.release(key);
}
