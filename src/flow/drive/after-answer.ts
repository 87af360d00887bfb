/**
 * What the loop does with an attempt that did not simply succeed: its class
 * and the server's hint, told to the host's gate (in the turn the answer
 * came in), then: an abort stops it,
 * `decide` says retry or stop, the one look past the deadline stops, a 401
 * asks `onUnauthorized` once, a retry is scheduled. Part of the next step's
 * chunk (next-step.ts): a page whose sends simply succeed never loads it.
 * It imports only types of the loop's modules: what it uses of them comes
 * in the kit, what it does to this operation through `round` (drive.ts).
 */
import type { OperationRecord } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { LazyGate } from '../../policy/lazy-gate.js';
import type { WriteOptions } from '../../store/store.js';
import type { AttemptEnd } from '../decide/attempt-history.js';
import type { Observation } from '../decide/classify.js';
import type { Stop } from '../decide/decide.js';
import { classify, decide, HostGate, parseServerHintMs } from '../decide/next-step.js';
import { endAttempt, refreshAuth, releaseUnrefreshed, scheduleRetry } from '../decide/retry-transitions.js';
import { stopAborted, stopWith } from '../decide/stop.js';
import type { AttemptContext, Engine } from '../engine/engine.js';
import type { AttemptOutput } from './attempt.js';
import type { LaterRound, LaterRoundKit } from './later-round-load.js';
import type { NextStepKit } from './next-step-load.js';
import type { Base } from './outcome.js';

/** What one drive of an operation hands over: its writes, each fenced by its lease, and its way to stop. */
export interface Round {
  engine: Engine;
  base: Base;
  signal: AbortSignal | undefined;
  context: AttemptContext;
  write: (fn: (r: OperationRecord) => OperationRecord, options?: WriteOptions) => Promise<OperationRecord>;
  settle: (stop: Stop, end?: AttemptEnd) => Promise<OperationRecord>;
  succeed: (end: AttemptEnd) => Promise<OperationRecord>;
  /**
   * Gives the operation back, pending (`how`), or stops it as the caller's abort: called only once the later
   * rounds' chunk is loaded (it builds the stop).
   */
  stopWaiting: (
    why: 'aborted' | 'shutdown',
    r: OperationRecord,
    how?: (r: OperationRecord) => OperationRecord,
  ) => Promise<OperationRecord | undefined>;
  letGoAndThrow: (error: unknown, how?: (r: OperationRecord) => OperationRecord) => Promise<never>;
  /** The later rounds' chunk, loaded first if it is not. */
  laterRound: () => Promise<LaterRound>;
  /** The later rounds' chunk if it is loaded. */
  laterLoaded: () => LaterRound | undefined;
  laterKit: LaterRoundKit;
}

/** The answer, as the loop saw it. */
export interface Answered {
  /** The record with the attempt started (not yet ended). */
  record: OperationRecord;
  endedAt: number;
  /** The provider's id read from the answer (provider-id.ts). */
  providerId: string | undefined;
  policy: ResolvedPolicy;
  gate: LazyGate | undefined;
  /** The attempt was the gate's probe. */
  probe: boolean;
  /** This attempt was the one look past the deadline. */
  lastLook: boolean;
  /** Called once the gate has heard of the attempt (a probe is the gate's again). */
  reported: () => void;
}

/** Settled (or let go: `undefined`), or another round with this record; a retry says whether it needs admission. */
export type AfterAnswer =
  | { kind: 'done'; record: OperationRecord | undefined }
  | { kind: 'again'; record: OperationRecord; needsAdmission?: boolean };

const RELAXED: WriteOptions = { durability: 'relaxed' };

export async function afterAnswer(
  kit: NextStepKit,
  round: Round,
  output: AttemptOutput,
  a: Answered,
): Promise<AfterAnswer> {
  const { engine, base, signal } = round;
  const { policy, gate, probe } = a;
  const { observation } = output;
  const key = base.key;
  const classification = classify(observation, {
    profile: policy.profile,
    overrides: policy.classify,
    otherStatus: policy.otherStatus,
  });
  const hintMs = observation.kind === 'response' ? parseServerHintMs(observation.header, a.endedAt) : undefined;
  const end: AttemptEnd = { classification, hintMs, nowMs: a.endedAt };
  end.providerId = a.providerId;
  const refused = hostRefused(observation);
  // What did not simply succeed is the gate's to count from now on: the full one, loaded with the rest.
  gate?.upgrade(HostGate);
  kit.reportToGate(gate, classification, probe, a.endedAt, hintMs, engine.runtime, key, refused);
  // An unsent probe proved nothing either way (unless the host refused it, reported above): let the next one go.
  if (probe && classification.class === 'not_sent' && !refused) gate?.releaseProbe(key);
  a.reported();
  const owner = engine.owner;
  const unrefreshed = (r: OperationRecord): OperationRecord => releaseUnrefreshed(kit, r);
  const done = (record: OperationRecord | undefined): AfterAnswer => ({ kind: 'done', record });
  const ended = endAttempt(kit, a.record, end);
  if (signal?.aborted && classification.class !== 'completed') {
    const stop = stopAborted(kit, ended, classification);
    return done(await round.settle(stop, end));
  }
  const decision = decide(
    {
      record: ended,
      classification,
      hintMs: end.hintMs,
      policy: a.policy,
      nowMs: end.nowMs,
      random: engine.runtime.random,
      canRefreshAuth: engine.onUnauthorized !== undefined && a.record.authRefreshed !== true,
    },
    kit,
  );
  if (a.lastLook && decision.kind !== 'succeed' && decision.kind !== 'stop') {
    // The one look past the deadline did not settle it: stop here, as the deadline says.
    const message = `The deadline had passed; one last attempt got: ${classification.detail}`;
    return done(await round.settle(stopWith(kit, ended, 'deadline', message, classification), end));
  }
  switch (decision.kind) {
    case 'succeed':
      return done(await round.succeed(end));
    case 'stop':
      return done(await round.settle(decision, end));
    case 'refresh_auth': {
      const record = await round.write((r) => refreshAuth(kit, r, end, owner), RELAXED);
      kit.emitEnded(engine, base, record, end);
      // The hook's wait is in the later rounds' chunk; after a slow load, an abort or a close comes first.
      if (round.laterLoaded() === undefined) {
        await round.laterRound().catch((e: unknown) => round.letGoAndThrow(e, unrefreshed));
        if (signal?.aborted === true || engine.shutdown.stopped) {
          const why = signal?.aborted === true ? 'aborted' : 'shutdown';
          return done(await round.stopWaiting(why, record, unrefreshed));
        }
      }
      const later = await round.laterRound();
      const refreshed = await later.callHook(
        round.laterKit,
        engine,
        () => engine.onUnauthorized?.(round.context),
        record.deadlineAt,
        signal,
      );
      if (refreshed !== true && 'stopped' in refreshed && refreshed.stopped !== 'deadline') {
        // Not the hook's failure: the caller aborted, or the client is closing mid-refresh.
        return done(await round.stopWaiting(refreshed.stopped, record, unrefreshed));
      }
      if (refreshed !== true) {
        // No fresh credentials: the 401 stands. Nothing new was sent.
        const why =
          'stopped' in refreshed ? 'did not finish before the deadline' : `failed: ${kit.describe(refreshed.thrown)}`;
        const message = `The server refused the credentials (401); onUnauthorized ${why}`;
        return done(
          await round.settle(stopWith(kit, record, 'correctable', message, { status: 401, class: 'correctable' })),
        );
      }
      return { kind: 'again', record };
    }
    case 'retry': {
      // Unsent attempts back off too (a refused connection must not become a hot loop); they cost no attempt or budget.
      // Unless the host refuses connections: then its gate holds the retry for the probe, which
      // notices the host's return within about a second, where a backoff would wait up to `maxDelayMs`.
      if (refused && gate?.refusing === true) decision.delayMs = 0;
      const record = await round.write((r) => scheduleRetry(kit, r, end, decision.delayMs, owner, true), RELAXED);
      kit.emitEnded(engine, base, record, end);
      engine.events.emit('retry:scheduled', {
        ...base,
        attempt: round.context.attempt + 1,
        delayMs: decision.delayMs,
        reason: decision.why,
        hintMs: end.hintMs,
      });
      return { kind: 'again', record, needsAdmission: decision.budgeted };
    }
  }
}

/**
 * The transport's codes that say the host itself is unreachable (refused
 * the connection, or its name did not resolve): not this machine being
 * offline, nor a request that could not be built, which no probe of the
 * host would cure.
 */
const HOST_REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);

export function hostRefused(observation: Observation): boolean {
  return (
    observation.kind === 'transport_error' &&
    observation.sent === 'not' &&
    HOST_REFUSED_CODES.has(observation.code ?? '')
  );
}
