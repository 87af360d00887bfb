/**
 * flow/drive/: the acting side of one operation: its run (claimed, or left
 * to its owner), this loop, the attempt, the waits, the gate and what must
 * pass before each attempt, the outcome written. It may import every stage
 * below it (request, decide, transport, engine), never flow/calls/.
 *
 * The loop: the one place that sleeps, sends and writes. Everything it
 * decides comes from pure code (classify, decide, transitions, the gate);
 * this file only acts, in the order the write-ahead rule demands:
 *
 *   claimed (run.ts) → attempt recorded as started → one HTTP request
 *   → classify → decide → outcome recorded → events → sleep or settle
 *
 * Every write is fenced by the lease epoch; losing the lease stops the loop
 * without writing, and another owner carries on with the same key.
 */
import { countAttempts, LeaseLostError } from '../../errors.js';
import type { OperationRecord, StoredAnswer } from '../../model.js';
import type { WriteOptions } from '../../store/store.js';
import { type AttemptEnd, attemptNumber, MAX_KEPT_ATTEMPTS } from '../decide/attempt-history.js';
import { mayHaveTakenEffect, type Stop } from '../decide/decide.js';
import { plainSuccess } from '../decide/plain-success.js';
import { liveRule } from '../decide/policy-snapshot.js';
import { assertFenced, release, startAttempt, succeed } from '../decide/transitions.js';
import type { Trim } from '../decide/trim-attempts.js';
import type { AttemptContext, Engine } from '../engine/engine.js';
import { attemptTimeoutMs } from '../transport/timeouts.js';
import type { Round } from './after-answer.js';
import { type AttemptOutput, followsRedirects, performAttempt } from './attempt.js';
import { policyOfClaimed } from './claimed-policy.js';
import { type NextStep as BeforeStep, firstLook, type Situation } from './first-look.js';
import { gateFor, lastAttemptWasBudgeted, reportToGate } from './gating.js';
import {
  LATER_ROUND_KIT,
  type LaterRound,
  loadedLaterRound,
  loadLaterRound,
  prefetchLaterRound,
} from './later-round-load.js';
import { leaseStillOurs } from './lease-check.js';
import { mayAttemptNow } from './may-attempt.js';
import { loadedNextStep, loadNextStep, NEXT_STEP_KIT, type NextStep, prefetchNextStep } from './next-step-load.js';
import {
  asOperationFailure,
  attemptsSent,
  type Base,
  emitEnded,
  finalAnswer,
  keyHeaders,
  storedResult,
} from './outcome.js';
import { providerIdOf } from './provider-id.js';
import type { StartedAttempt } from './start-at-once.js';

/**
 * Writes that may ride the store's next durable write (`WriteOptions`):
 * each follows an attempt's start, which was durable before anything was
 * sent, so losing one to a power cut leaves a record that may have reached
 * the server, and resuming it resends under the same key for the server's
 * stored answer. A stop (`settle`) stays durable: it may be the only record
 * that nothing was sent, and the caller is told so.
 */
const RELAXED: WriteOptions = { durability: 'relaxed' };

/**
 * Owns the record until it settles. Returns `undefined` when the lease was
 * lost. `started`: the record's last attempt is already recorded as started
 * (by the write-ahead or the claim, see start-at-once.ts), so the first
 * round sends it at once.
 */
export async function drive(
  engine: Engine,
  claimed: OperationRecord,
  signal: AbortSignal | undefined,
  started: StartedAttempt | undefined,
  /** Given the record as this loop last knew it, however it ends (run.ts reports a removal with it). */
  seen?: { record?: OperationRecord },
): Promise<OperationRecord | undefined> {
  const { runtime, events, owner } = engine;
  const key = claimed.key;
  const epoch = claimed.epoch;
  const policy = await policyOfClaimed(engine, claimed);
  const gate = gateFor(engine, policy, claimed.request.url);
  const base: Base = {
    key,
    operation: `${claimed.request.method} ${claimed.request.url}`,
    fingerprint: claimed.fingerprint,
    trace: claimed.trace,
  };
  // Durable unless `RELAXED`: the writes after an attempt's start, whose loss a resend under the same key repairs.
  const write = (fn: (r: OperationRecord) => OperationRecord, options?: WriteOptions) =>
    engine.store.update(
      key,
      (current) => fn(assertFenced(current, key, owner, epoch)),
      options,
    ) as Promise<OperationRecord>;
  /** The last attempt's answer when it was a non-2xx response: kept with a stop (see `finalAnswer`). */
  let answer: StoredAnswer | undefined;
  const settle = async (stop: Stop, end?: AttemptEnd): Promise<OperationRecord> => {
    gate?.forget(key);
    // A stop is built only in the chunks loaded later (before-attempt.ts, after-answer.ts: stop.ts travels with
    // them), so the one that built it is loaded, and records it (settle-stop.ts travels with them too).
    const { settleStopped } = (loadedNextStep() ?? loadedLaterRound()) as Pick<NextStep, 'settleStopped'>;
    const settled = await write((r) =>
      settleStopped(NEXT_STEP_KIT, r, stop, runtime.now(), policy.retainMs, end, answer),
    );
    if (end !== undefined) emitEnded(engine, base, settled, end);
    if (events.listens('settled')) {
      events.emit('settled', { ...base, state: settled.state, reason: stop.reason, ...attemptCounts(settled) });
    }
    return settled;
  };
  /**
   * A wait for a user hook ended by the caller's abort or the client closing
   * (`callHook`): stop as an abort anywhere else does (whether anything may
   * have taken effect follows from the attempts), or let the record go,
   * pending, to the next owner.
   */
  /** Gives the operation back, pending, for a later owner (or a later look, when `mayAttempt` says no). */
  const letGo = async (how = release): Promise<undefined> => {
    await write(how, RELAXED);
    return undefined;
  };
  /**
   * A chunk this loop needed could not be loaded (a page that could not fetch it): no attempt is open; the
   * operation goes back pending for the next owner (`how`), and the caller hears why.
   */
  const letGoAndThrow = async (error: unknown, how = release): Promise<never> => {
    await letGo(how).catch(() => undefined);
    throw error;
  };
  // Only a hook's wait stops waiting, and the hooks' waits are the later rounds' chunk: it is loaded, and builds the
  // stop (its texts are not on the send path).
  const stopWaiting = async (why: 'aborted' | 'shutdown', r: OperationRecord, how = release) => {
    if (why === 'aborted') {
      return await settle((loadedLaterRound() as LaterRound).stopAborted(LATER_ROUND_KIT, r));
    }
    return await letGo(how);
  };

  /** The later rounds' chunk: taken without an await once loaded (see `loadedNextStep`). */
  const laterRound = async (): Promise<LaterRound> => loadedLaterRound() ?? (await loadLaterRound(runtime));

  const succeedWith = async (output: AttemptOutput, end: AttemptEnd): Promise<OperationRecord> => {
    const result = storedResult(output, policy, end.nowMs, engine.resultHeaders);
    const done = await write((r) => succeed(r, end, result, policy.retainMs), RELAXED);
    emitEnded(engine, base, done, end);
    if (events.listens('settled')) {
      events.emit('settled', { ...base, state: 'succeeded', reason: undefined, ...attemptCounts(done) });
    }
    return done;
  };
  /** This operation as after-answer.ts (the next step's chunk) acts on it. */
  const round = (context: AttemptContext, output: AttemptOutput): Round => ({
    engine,
    base,
    signal,
    context,
    write,
    settle,
    succeed: (end) => succeedWith(output, end),
    stopWaiting,
    letGoAndThrow,
    laterRound,
    laterLoaded: loadedLaterRound,
    laterKit: LATER_ROUND_KIT,
  });

  let record = claimed;
  let needsAdmission = lastAttemptWasBudgeted(record);
  /**
   * An admitted probe whose attempt started and is not yet reported to the
   * gate: released on every path, or the gate would stay shut. (Before its
   * attempt starts, an admission is the gate's to give back: `giveBack`.)
   */
  let probeOut = false;
  /** The network came back while we waited after an unsent attempt: try now. */
  let dueNow = false;
  /** The attempt is recorded as started already (by the write-ahead or the claim): the first round sends it. */
  let first = started;
  try {
    for (;;) {
      let probe = false;
      let lastLook = false;
      let timeoutMs: number;
      /** Our monotonic time before this attempt's start was written (lease-check.ts). */
      let startedAtMono: number;
      let credentials: { headers: Record<string, string> } | { error: unknown };
      // The attempt about to start, or (first round after a started write-ahead) already started.
      const context = attemptContext(record, first !== undefined);
      if (first !== undefined) {
        timeoutMs = first.timeoutMs;
        startedAtMono = first.atMono;
        credentials = { headers: keyHeaders(policy, record) };
        first = undefined;
      } else {
        // The `headers` callback is in the later rounds' chunk: loaded first if nothing has loaded it yet (a
        // client with one starts loading it as it is created), so that whatever happened during a slow load (an
        // abort, a close) is seen by `beforeAttempt` before the callback is called.
        // So is the trimming of a full history, which the attempt's start needs.
        if (
          (engine.credentials !== undefined || record.attempts.length >= MAX_KEPT_ATTEMPTS) &&
          loadedLaterRound() === undefined
        ) {
          await loadLaterRound(runtime).catch(letGoAndThrow);
        }
        const situation: Situation = { record, policy, gate, base, signal, needsAdmission, dueNow };
        // A plain round (a first send written ahead: the browser client's) is looked at here; any other by the
        // full look, in the later rounds' chunk, loaded first if nothing has loaded it yet. It may load the full
        // gate in turn: either may fail to load.
        const before: BeforeStep =
          (await firstLook(engine, situation)) ??
          (await laterRound()
            .then((later) => later.beforeAttempt(LATER_ROUND_KIT, engine, situation))
            .catch(letGoAndThrow));
        dueNow = before.kind === 'again' && before.dueNow;
        if (before.kind === 'again') continue;
        if (before.kind === 'stop') return await settle(before.stop);
        if (before.kind === 'release') return await letGo();
        ({ probe, lastLook } = before);
        needsAdmission = false;
        // Credentials first: if the callback fails (say, a token refresh), nothing
        // can be sent, and the attempt must not look as if it might have been.
        const given =
          engine.credentials === undefined
            ? { headers: keyHeaders(policy, record) }
            : await (loadedLaterRound() as LaterRound).withCredentials(
                LATER_ROUND_KIT,
                engine,
                engine.credentials,
                keyHeaders(policy, record),
                context,
                before.untilMs,
                signal,
              );
        if ('stopped' in given) return await stopWaiting(given.stopped, record);
        // The callback can take a while (a token refresh): the user may have signed out meanwhile.
        if (!mayAttemptNow(engine, record)) return await letGo();
        credentials = given;
        const startedAt = runtime.now();
        timeoutMs = attemptTimeoutMs(policy, before.untilMs, startedAt);
        startedAtMono = runtime.monotonicNow();
        const later = loadedLaterRound();
        const trim: Trim | undefined = later && ((r, a) => later.dropOldAttempts(LATER_ROUND_KIT, r, a));
        record = await write((r) => startAttempt(r, owner, startedAt, timeoutMs, trim));
        // The admission is used: from here a probe is released by its report (or below).
        gate?.spend(key);
        probeOut = probe;
      }
      const attempt = context.attempt;
      const resendCount = attemptsSent(record) - 1;
      if (events.listens('attempt:started')) events.emit('attempt:started', { ...base, attempt, resendCount });
      // Headers a listener adds for this request alone (a trace context), right before it leaves.
      const beforeSend = events.listens('attempt:sending')
        ? (headers: Record<string, string>) =>
            events.emit('attempt:sending', { ...base, attempt, resendCount, headers })
        : undefined;
      if (attempt === 1) gate?.noteFirstAttempt();

      const output =
        'headers' in credentials
          ? await runtime.track(
              performAttempt(engine.http, runtime, {
                request: record.request,
                extraHeaders: credentials.headers,
                timeoutMs,
                signal,
                maxResponseBytes: policy.maxResponseBytes,
                followRedirects: followsRedirects(policy, record.request.method),
                connectivity: engine.connectivity,
                leaseHeld: leaseStillOurs(runtime, owner.leaseMs, startedAtMono),
                beforeSend,
              }),
            )
          : // Only a later round calls the `headers` callback: its chunk is loaded.
            (loadedLaterRound() as LaterRound).credentialsFailed(credentials.error);
      const endedAt = runtime.now();
      answer = finalAnswer(output, engine.resultHeaders);
      // A plain 2xx is told here; anything else loads the rest of the decisions on first need (next-step.ts).
      const plain = plainSuccess(output.observation, policy.classify);
      const providerId = providerIdOf(output, liveRule(engine.endpoints, record)?.providerId);
      // The later rounds' chunk loads in the background after an answer: a retry, a stored operation claimed
      // again, the next send while offline find it here even if the page has gone offline by then.
      prefetchLaterRound(runtime);
      if (plain !== undefined) {
        // So does the rest after a plain success (not before the first send: after its answer).
        prefetchNextStep(runtime);
        const end: AttemptEnd = { classification: plain, hintMs: undefined, nowMs: endedAt };
        end.providerId = providerId;
        reportToGate(gate, plain, probe, endedAt, undefined, runtime, key, false);
        probeOut = false;
        return await succeedWith(output, end);
      }
      let next: NextStep;
      try {
        next = loadedNextStep() ?? (await loadNextStep(runtime));
      } catch (error) {
        // Not loaded (a chunk the page could not fetch): the attempt stays open and the record goes back
        // pending, as after a crash mid-attempt; the next owner closes it as `ambiguous` and goes on with
        // the same key. The caller is told it may have taken effect (asOperationFailure, below).
        await letGo().catch(() => undefined);
        throw error;
      }
      // Classified, told to the host's gate (at once, in this turn) and acted on in the next step's chunk.
      const after = await next.afterAnswer(NEXT_STEP_KIT, round(context, output), output, {
        record,
        endedAt,
        providerId,
        policy,
        gate,
        probe,
        lastLook,
        reported: () => {
          probeOut = false;
        },
      });
      if (after.kind === 'done') return after.record;
      record = after.record;
      if (after.needsAdmission !== undefined) needsAdmission = after.needsAdmission;
    }
  } catch (error) {
    gate?.forget(key);
    if (error instanceof LeaseLostError) return undefined;
    throw await asOperationFailure(engine, key, record, error);
  } finally {
    // An admission whose attempt never started (the hook wait stopped, the start's write failed) goes back.
    gate?.giveBack(key);
    if (probeOut) gate?.releaseProbe(key);
    if (seen !== undefined) seen.record = record;
  }
}

/** The `settled` event's counts, and whether the operation may have taken effect. */
const attemptCounts = (r: OperationRecord) =>
  Object.assign(countAttempts(r.attempts, r.attemptsOmitted), { mayHaveTakenEffect: mayHaveTakenEffect(r) });

/** What the `headers` and `onUnauthorized` callbacks are told about an attempt. */
function attemptContext(record: OperationRecord, started: boolean): AttemptContext {
  return {
    key: record.key,
    attempt: attemptNumber(record) - (started ? 1 : 0),
    method: record.request.method,
    url: record.request.url,
    meta: record.meta,
  };
}
