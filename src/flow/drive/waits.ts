/**
 * The loop's waits that a first send never makes: the retry delay, and
 * user hooks (`headers`, `onUnauthorized`) under the operation's deadline,
 * so a hook that never answers cannot hold the operation. Each sleeps through `pause` (pause.ts, handed over in the kit):
 * ends early on the caller's signal, the client's shutdown or a wake-up
 * (online, the gate). Part of the later round's chunk (later-round.ts).
 */

import type { OperationRecord } from '../../model.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import type { AttemptContext, Engine } from '../engine/engine.js';
import type { LaterRoundKit } from './later-round-load.js';

/**
 * Waits for the next attempt's time. Resolves `true` ("due now") when it
 * ended early because what the wait was for is over: after an unsent
 * attempt (the network or the server was unreachable), the platform saying
 * it is back online; after a failure the host answered, a success proving
 * the host back (its gate's `onChange` with `recovered`; the gate then
 * paces the retry).
 */
export async function waitUntilDue(
  kit: LaterRoundKit,
  engine: Engine,
  record: OperationRecord,
  nowMs: number,
  signal: AbortSignal | undefined,
  gate?: LazyGate,
): Promise<boolean> {
  const last = record.attempts[record.attempts.length - 1];
  const connectivity = engine.connectivity;
  const subscribe =
    last?.class === 'not_sent'
      ? connectivity && ((wake: () => void) => connectivity.onOnline(wake))
      : last?.class === 'retryable' || last?.class === 'ambiguous'
        ? gate && ((wake: () => void) => gate.onChange((recovered) => recovered && wake()))
        : undefined;
  if (subscribe === undefined) {
    await kit.pause(engine, record.nextAttemptAt - nowMs, signal);
    return false;
  }
  const woken = new AbortController();
  const unsubscribe = subscribe(() => woken.abort());
  try {
    await kit.pause(engine, record.nextAttemptAt - nowMs, signal, woken.signal);
  } finally {
    unsubscribe();
  }
  return woken.signal.aborted && !engine.shutdown.stopped && signal?.aborted !== true;
}

/**
 * Why a wait for a user hook ended without its answer: the deadline passed,
 * the caller aborted, or the client is closing. Only the first is about the
 * hook; the others are the loop's own stops (drive.ts), which must not be
 * recorded as the hook failing.
 */
export type HookStop = 'deadline' | 'aborted' | 'shutdown';

/**
 * Runs a user hook under the operation's deadline. Resolves `true` when it
 * finished, `{ stopped }` when the deadline, the caller's signal or the
 * client's shutdown came first (saying which), or with what it threw.
 */
export async function callHook(
  kit: LaterRoundKit,
  engine: Engine,
  hook: () => unknown,
  deadlineAt: number,
  signal: AbortSignal | undefined,
): Promise<true | { stopped: HookStop } | { thrown: unknown }> {
  let answer: unknown;
  try {
    answer = hook();
  } catch (thrown) {
    return { thrown };
  }
  // A synchronous answer needs no timer (the common case: headers from memory).
  if (!isThenable(answer)) return true;
  const timer = new AbortController();
  try {
    const finished = Promise.resolve(answer).then(
      () => true as const,
      (thrown: unknown) => ({ thrown }),
    );
    const expired = kit
      .pause(engine, Math.max(0, deadlineAt - engine.runtime.now()), signal, timer.signal)
      .then((elapsed) => ({ stopped: elapsed ? 'deadline' : stopOf(engine, signal) }));
    return await Promise.race([finished, expired]);
  } finally {
    timer.abort();
  }
}

/** Which signal ended a wait early; the caller's abort first, as the loop checks it first (before-attempt.ts). */
function stopOf(engine: Engine, signal: AbortSignal | undefined): HookStop {
  if (signal?.aborted === true) return 'aborted';
  return engine.shutdown.stopped ? 'shutdown' : 'deadline';
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Adds the `headers` callback's answer. A callback that throws, or does not
 * answer before the deadline, is data: the attempt is not sent. The caller's
 * abort or the client closing while it is pending is not about the callback:
 * `{ stopped }`, and the loop stops or lets go before recording an attempt.
 */
export async function withCredentials(
  kit: LaterRoundKit,
  engine: Engine,
  credentials: NonNullable<Engine['credentials']>,
  headers: Record<string, string>,
  context: AttemptContext,
  deadlineAt: number,
  signal: AbortSignal | undefined,
): Promise<{ headers: Record<string, string> } | { error: unknown } | { stopped: Exclude<HookStop, 'deadline'> }> {
  let answer: Record<string, string> | undefined;
  const outcome = await callHook(
    kit,
    engine,
    () => {
      const given = credentials(context);
      if (!isThenable(given)) {
        answer = given;
        return undefined;
      }
      return Promise.resolve(given).then((value) => {
        answer = value;
      });
    },
    deadlineAt,
    signal,
  );
  if (outcome === true) return { headers: Object.assign(headers, answer) };
  if ('thrown' in outcome) return { error: outcome.thrown };
  if (outcome.stopped === 'deadline') return { error: new Error('it did not answer before the deadline') };
  return { stopped: outcome.stopped };
}
