/**
 * The loop: the one place that sleeps, sends and writes. Everything it
 * decides comes from pure code (classify, decide, transitions, the gate);
 * this file only acts, in the order the write-ahead rule demands:
 *
 *   claim (lease, epoch) → attempt recorded as started → one HTTP request
 *   → classify → decide → outcome recorded → events → sleep or settle
 *
 * Every write is fenced by the lease epoch; losing the lease stops the loop
 * without writing, and another owner carries on with the same key.
 */
import type { KyInstance } from 'ky';
import { isOncelyError, LeaseLostError, NotFoundError, OperationError } from '../errors.js';
import type { Emitter } from '../events.js';
import type { EndpointTable, ResolvedPolicy } from '../options.js';
import type { Admission, Governor, HostGate } from '../policy/gate.js';
import { parseServerHintMs } from '../policy/retry-after.js';
import type { Runtime } from '../runtime.js';
import type { OperationStore } from '../store/store.js';
import { onAbort } from './abort.js';
import { type AttemptOutput, performAttempt } from './attempt.js';
import { type Classification, classify } from './classify.js';
import { decide, mayHaveTakenEffect, type Stop, stopWith } from './decide.js';
import type { LeaseWatch } from './lease-watch.js';
import { policyOfRecord } from './policy-snapshot.js';
import type { OperationRecord, StoredResult } from './record.js';
import { storedBodyFrom, storedResponseHeaders } from './result.js';
import type { Shutdown } from './shutdown.js';
import {
  type AttemptEnd,
  assertFenced,
  attemptNumber,
  claim,
  claimOutcome,
  endLast,
  type Owner,
  refreshAuth,
  release,
  scheduleRetry,
  settleStopped,
  startAttempt,
  succeed,
} from './transitions.js';

/** Context passed to the `headers` and `onUnauthorized` callbacks. */
export interface AttemptContext {
  key: string;
  /** 1-based number of the attempt about to be sent. */
  attempt: number;
  method: string;
  url: string;
  meta: Readonly<Record<string, unknown>> | undefined;
}

export interface Engine {
  store: OperationStore;
  runtime: Runtime;
  owner: Owner;
  http: KyInstance;
  endpoints: EndpointTable;
  governor: Governor;
  events: Emitter;
  /** Credentials for one attempt (never stored). */
  credentials: ((ctx: AttemptContext) => Record<string, string> | Promise<Record<string, string>>) | undefined;
  onUnauthorized: ((ctx: AttemptContext) => void | Promise<void>) | undefined;
  /** Extra response headers to keep in stored results. */
  resultHeaders: readonly string[];
  /** Aborted when the client closes: loops suspend (records stay pending). */
  shutdown: Shutdown;
  /** How often to look again at an operation another owner holds. */
  pollMs: number;
  /** Platform connectivity, when known (browsers): no attempt is made while offline. */
  connectivity: Connectivity | undefined;
  /** Judges other owners' leases on our monotonic clock (flow/lease-watch.ts). */
  leases: LeaseWatch;
}

/**
 * What the platform knows about the network. While `online()` is false no
 * attempt is made (and none is counted); the operation waits for `onOnline`
 * or its deadline.
 */
export interface Connectivity {
  online(): boolean;
  /** Calls `fn` when the platform may be back online. Returns an unsubscribe. */
  onOnline(fn: () => void): () => void;
}

/**
 * Drives operation `key` until it is terminal (or the client shuts down) and
 * resolves with the record as stored. If another owner holds it: with
 * `busy: 'wait'`, waits for that owner to finish or its lease to expire, then
 * takes over; with `busy: 'skip'`, returns the record as it is.
 */
export async function runOperation(
  engine: Engine,
  key: string,
  signal?: AbortSignal,
  busy: 'wait' | 'skip' = 'wait',
  written?: OperationRecord,
): Promise<OperationRecord> {
  let known = written;
  for (;;) {
    const record = isOursAndIdle(known, engine.owner, engine.runtime.now())
      ? known
      : await engine.store.update(key, (current) =>
          claim(current, key, engine.owner, engine.runtime.now(), (lease, epoch) =>
            engine.leases.expired(key, lease.owner, epoch, lease.until),
          ),
        );
    known = undefined;
    if (record === undefined) throw new NotFoundError(key);
    const claimed = claimOutcome(record, engine.owner);
    if (claimed.kind !== 'busy') engine.leases.forget(key);
    if (claimed.kind === 'terminal') return record;
    if (claimed.kind === 'claimed') {
      const driven = await drive(engine, record, signal);
      if (driven !== undefined) return driven;
    } else {
      // Someone else holds the lease: leave it to them, or look again when it would expire.
      if (busy === 'skip') return record;
      const waitMs = Math.min(engine.pollMs, Math.max(1, claimed.untilMs - engine.runtime.now()));
      if (!(await pause(engine, waitMs, signal))) return record;
    }
    if (engine.shutdown.stopped) {
      const latest = await engine.store.get(key);
      if (latest === undefined) throw new NotFoundError(key);
      return latest;
    }
  }
}

/**
 * A record this client has just written (`written`, a new operation is
 * created leased to its creator) needs no claim: `claim` would return it
 * unchanged, so reading it back from the store is skipped. Safe even if it
 * went stale meanwhile: the next write (the attempt's start, before anything
 * is sent) is fenced by owner and epoch, and a lost lease sends the loop
 * back to a real claim.
 */
function isOursAndIdle(record: OperationRecord | undefined, owner: Owner, nowMs: number): record is OperationRecord {
  return (
    record !== undefined && record.state === 'pending' && record.lease?.owner === owner.id && record.lease.until > nowMs
  );
}

/** Owns the record until it settles. Returns `undefined` when the lease was lost. */
async function drive(
  engine: Engine,
  claimed: OperationRecord,
  signal: AbortSignal | undefined,
): Promise<OperationRecord | undefined> {
  const { runtime, events, owner } = engine;
  const key = claimed.key;
  const epoch = claimed.epoch;
  const policy = policyOfRecord(engine.endpoints, claimed);
  const gate = gateFor(engine, policy, claimed.request.url);
  const base = { key, operation: `${claimed.request.method} ${claimed.request.url}`, fingerprint: claimed.fingerprint };
  const write = (fn: (r: OperationRecord) => OperationRecord) =>
    engine.store.update(key, (current) => fn(assertFenced(current, key, owner, epoch))) as Promise<OperationRecord>;
  const settle = async (stop: Stop, end?: AttemptEnd): Promise<OperationRecord> => {
    gate?.forget(key);
    const settled = await write((r) => settleStopped(r, stop, runtime.now(), policy.retainMs, end));
    if (end !== undefined) emitEnded(engine, base, settled, end);
    if (events.listens('settled')) {
      events.emit('settled', { ...base, state: settled.state, reason: stop.reason, attempts: settled.attempts.length });
    }
    return settled;
  };

  let record = claimed;
  let needsAdmission = lastAttemptWasBudgeted(record);
  /** An admitted probe not yet reported to the gate: released on every path, or the gate would stay shut. */
  let probeOut = false;
  /** The network came back while we waited after an unsent attempt: try now. */
  let dueNow = false;
  try {
    for (;;) {
      if (signal?.aborted) return await settle(stopWith(record, 'aborted', 'The caller aborted the operation'));
      if (engine.shutdown.stopped) {
        await write(release);
        return undefined;
      }
      const now = runtime.now();
      /** Past the deadline, one attempt may still fetch the server's stored answer (see `settlesByReplay`). */
      const lastLook = now >= record.deadlineAt && settlesByReplay(record, policy, now);
      if (now >= record.deadlineAt && !lastLook) {
        return await settle(stopWith(record, 'deadline', 'The deadline passed before the next attempt'));
      }
      // The window the next attempt (or a callback before it) may use.
      const untilMs = lastLook ? record.createdAt + policy.keyRetentionMs : record.deadlineAt;
      if (record.nextAttemptAt > now && !dueNow) {
        dueNow = await waitUntilDue(engine, record, now, signal);
        continue;
      }
      dueNow = false;
      if (engine.connectivity !== undefined && !engine.connectivity.online()) {
        await waitForOnline(engine, engine.connectivity, record.deadlineAt - now, signal);
        continue;
      }
      let probe = false;
      if (needsAdmission && gate !== undefined && !lastLook) {
        const admitted = await admit(engine, gate, record, base, signal);
        if (admitted === 'interrupted') continue;
        if (admitted === 'past_deadline') {
          return await settle(
            stopWith(record, 'budget', 'The retry budget for this host stayed exhausted until the deadline'),
          );
        }
        probe = admitted.probe;
        probeOut = probe;
      }
      needsAdmission = false;

      const context: AttemptContext = {
        key,
        attempt: attemptNumber(record),
        method: record.request.method,
        url: record.request.url,
        meta: record.meta,
      };
      // Credentials first: if the callback fails (say, a token refresh), nothing
      // can be sent, and the attempt must not look as if it might have been.
      const credentials =
        engine.credentials === undefined
          ? { headers: keyHeaders(policy, record) }
          : await withCredentials(engine, engine.credentials, keyHeaders(policy, record), context, untilMs);
      const startedAt = runtime.now();
      const timeoutMs = Math.max(1, Math.min(policy.attemptTimeoutMs, untilMs - startedAt));
      record = await write((r) => startAttempt(r, owner, startedAt, timeoutMs));
      const attempt = context.attempt;
      if (events.listens('attempt:started')) {
        const resendCount = attemptsSent(record) - 1;
        events.emit('attempt:started', { ...base, attempt, resendCount });
      }
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
              }),
            )
          : credentialsFailed(credentials.error);
      const endedAt = runtime.now();
      const classification = classify(output.observation, {
        profile: policy.profile,
        overrides: policy.classify,
        otherStatus: policy.otherStatus,
      });
      const hintMs =
        output.observation.kind === 'response' ? parseServerHintMs(output.observation.header, endedAt) : undefined;
      const end: AttemptEnd = { classification, hintMs, nowMs: endedAt };
      reportToGate(gate, classification, probe, endedAt, hintMs, runtime);
      // An unsent probe proved nothing either way: let the next one go.
      if (probe && classification.class === 'not_sent') gate?.releaseProbe();
      probeOut = false;

      const ended = { ...record, attempts: endLast(record, end) };
      if (signal?.aborted && classification.class !== 'completed') {
        return await settle(stopWith(ended, 'aborted', 'The caller aborted the operation', classification), end);
      }
      const decision = decide({
        record: ended,
        classification,
        hintMs,
        policy,
        nowMs: endedAt,
        random: runtime.random,
        canRefreshAuth: engine.onUnauthorized !== undefined && record.authRefreshed !== true,
      });
      if (lastLook && decision.kind !== 'succeed' && decision.kind !== 'stop') {
        // The one look past the deadline did not settle it: stop here, as the deadline says.
        return await settle(
          stopWith(
            ended,
            'deadline',
            `The deadline had passed; one last attempt got: ${classification.detail}`,
            classification,
          ),
          end,
        );
      }
      switch (decision.kind) {
        case 'succeed': {
          const result = storedResult(output, policy, endedAt, engine.resultHeaders);
          const done = await write((r) => succeed(r, end, result, policy.retainMs));
          emitEnded(engine, base, done, end);
          if (events.listens('settled')) {
            events.emit('settled', { ...base, state: 'succeeded', reason: undefined, attempts: done.attempts.length });
          }
          return done;
        }
        case 'stop':
          return await settle(decision, end);
        case 'refresh_auth': {
          record = await write((r) => refreshAuth(r, end, owner));
          emitEnded(engine, base, record, end);
          const refreshed = await callHook(engine, () => engine.onUnauthorized?.(context), record.deadlineAt, signal);
          if (refreshed !== true) {
            // No fresh credentials: the 401 stands. Nothing new was sent.
            const why =
              refreshed === false ? 'did not finish before the deadline' : `failed: ${describe(refreshed.thrown)}`;
            const stop = stopWith(
              record,
              'correctable',
              `The server refused the credentials (401); onUnauthorized ${why}`,
              {
                status: 401,
                class: 'correctable',
              },
            );
            return await settle(stop);
          }
          break;
        }
        case 'retry':
          // Unsent attempts back off too (a refused connection must not become a hot loop); they cost no attempt or budget.
          record = await write((r) => scheduleRetry(r, end, decision.delayMs, owner, true));
          needsAdmission = decision.budgeted;
          emitEnded(engine, base, record, end);
          events.emit('retry:scheduled', {
            ...base,
            attempt: attempt + 1,
            delayMs: decision.delayMs,
            reason: decision.why,
            hintMs,
          });
          break;
      }
    }
  } catch (error) {
    gate?.forget(key);
    if (error instanceof LeaseLostError) return undefined;
    throw await asOperationFailure(engine, key, record, error);
  } finally {
    if (probeOut) gate?.releaseProbe();
  }
}

/**
 * An operation taken over at (or after) its deadline whose earlier attempt
 * may have taken effect gets one more attempt with the same key, within the
 * server's key retention: the server answers with its stored result (a
 * replay costs nothing) and the operation ends with the truth instead of
 * `unknown`. Only one: attempts started after the deadline are not repeated.
 */
function settlesByReplay(record: OperationRecord, policy: ResolvedPolicy, nowMs: number): boolean {
  if (!mayHaveTakenEffect(record) || nowMs >= record.createdAt + policy.keyRetentionMs) return false;
  return !record.attempts.some((a) => a.startedAt >= record.deadlineAt);
}

/**
 * Anything that escapes the loop (the store failing — a full disk — after a
 * request may have left) reaches the caller typed, with the key and the
 * state as stored: the operation stays stored and resumable with the same key.
 */
async function asOperationFailure(
  engine: Engine,
  key: string,
  known: OperationRecord,
  error: unknown,
): Promise<unknown> {
  if (isOncelyError(error)) return error;
  const stored = await engine.store.get(key).catch(() => undefined);
  const record = stored ?? known;
  const maybe = mayHaveTakenEffect(record);
  return new OperationError(`Operation ${key} was interrupted: ${describe(error)}`, {
    key,
    state: record.state,
    attempts: record.attempts,
    mayHaveTakenEffect: maybe,
    remediation: maybe
      ? 'It may have taken effect and stays stored: resume() finishes it with the same key (the provider deduplicates). Do not send it again under a new key.'
      : 'It stays stored: resume() finishes it with the same key once the cause is fixed.',
    cause: error,
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function attemptsSent(record: OperationRecord): number {
  let sent = (record.attemptsOmitted?.count ?? 0) - (record.attemptsOmitted?.byClass.not_sent ?? 0);
  for (const a of record.attempts) if (a.sent !== 'not') sent++;
  return sent;
}

/**
 * Waits for the next attempt's time. After an unsent attempt (the network
 * or the server was unreachable), the platform saying it is back online
 * ends the wait early: resolves `true` then ("due now").
 */
async function waitUntilDue(
  engine: Engine,
  record: OperationRecord,
  nowMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const last = record.attempts[record.attempts.length - 1];
  const connectivity = engine.connectivity;
  if (connectivity === undefined || last?.class !== 'not_sent') {
    await pause(engine, record.nextAttemptAt - nowMs, signal);
    return false;
  }
  const online = new AbortController();
  const unsubscribe = connectivity.onOnline(() => online.abort());
  try {
    await pause(engine, record.nextAttemptAt - nowMs, signal, online.signal);
  } finally {
    unsubscribe();
  }
  return online.signal.aborted && !engine.shutdown.stopped && signal?.aborted !== true;
}

/**
 * Runs a user hook under the operation's deadline. Resolves `true` when it
 * finished, `false` when the deadline (or the caller's signal, or shutdown)
 * came first, or with what it threw.
 */
async function callHook(
  engine: Engine,
  hook: () => unknown,
  deadlineAt: number,
  signal: AbortSignal | undefined,
): Promise<true | false | { thrown: unknown }> {
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
    const expired = pause(engine, Math.max(0, deadlineAt - engine.runtime.now()), signal, timer.signal).then(
      () => false as const,
    );
    return await Promise.race([finished, expired]);
  } finally {
    timer.abort();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

type Base = { key: string; operation: string; fingerprint: string };

/** The `headers` callback threw: the attempt was never sent (retried until the deadline, attempts untouched). */
function credentialsFailed(error: unknown): AttemptOutput {
  const message = error instanceof Error ? error.message : String(error);
  return {
    observation: {
      kind: 'transport_error',
      sent: 'not',
      code: 'CREDENTIALS',
      message: `headers callback failed: ${message}`,
    },
    headers: {},
    bytes: undefined,
  };
}

function emitEnded(engine: Engine, base: Base, record: OperationRecord, end: AttemptEnd): void {
  const last = record.attempts[record.attempts.length - 1];
  if (last === undefined || !engine.events.listens('attempt:ended')) return;
  engine.events.emit('attempt:ended', {
    ...base,
    attempt: last.n,
    resendCount: attemptsSent(record) - (last.sent === 'not' ? 0 : 1),
    class: end.classification.class,
    status: end.classification.status,
    detail: end.classification.detail,
    durationMs: end.nowMs - last.startedAt,
  });
}

/** Waits for the gate; 'interrupted' when a signal fired (the loop re-checks). */
async function admit(
  engine: Engine,
  gate: HostGate,
  record: OperationRecord,
  base: Base,
  signal: AbortSignal | undefined,
): Promise<Extract<Admission, { kind: 'go' }> | 'past_deadline' | 'interrupted'> {
  const { runtime } = engine;
  for (;;) {
    const now = runtime.now();
    const admission = gate.admitRetry(record.key, now, runtime.random);
    if (admission.kind === 'go') {
      if (admission.atMs >= record.deadlineAt) return 'past_deadline';
      if (admission.atMs > now && !(await pause(engine, admission.atMs - now, signal))) return 'interrupted';
      return admission;
    }
    if (admission.untilMs >= record.deadlineAt) {
      gate.forget(record.key);
      return 'past_deadline';
    }
    engine.events.emit('held', { ...base, untilMs: admission.untilMs });
    // Ask again at the time given, or as soon as the gate changes (a probe
    // succeeded and held operations are being released).
    const woken = new AbortController();
    const unsubscribe = gate.onChange(() => woken.abort());
    const completed = await pause(engine, admission.untilMs - now, signal, woken.signal);
    unsubscribe();
    if (!completed && !woken.signal.aborted) return 'interrupted';
  }
}

/** Waits until the platform reports it is back online (or `maxMs` passes, or a signal fires). */
async function waitForOnline(
  engine: Engine,
  connectivity: Connectivity,
  maxMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const woken = new AbortController();
  const unsubscribe = connectivity.onOnline(() => woken.abort());
  try {
    if (!connectivity.online()) await pause(engine, maxMs, signal, woken.signal);
  } finally {
    unsubscribe();
  }
}

/**
 * Sleeps through the runtime. Resolves `true` when the time passed, `false`
 * when interrupted by the caller's signal, the client's shutdown or `wake`.
 */
async function pause(engine: Engine, ms: number, signal?: AbortSignal, wake?: AbortSignal): Promise<boolean> {
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

function gateFor(engine: Engine, policy: ResolvedPolicy, url: string): HostGate | undefined {
  if (policy.budget === undefined) return undefined;
  const host = new URL(url).host;
  const scope = policy.budget.per === 'host' ? host : `${policy.name}@${host}`;
  return engine.governor.gate(scope, policy.budget);
}

function reportToGate(
  gate: HostGate | undefined,
  c: Classification,
  probe: boolean,
  nowMs: number,
  hintMs: number | undefined,
  runtime: Runtime,
): void {
  if (gate === undefined) return;
  if (c.class === 'retryable' || c.class === 'ambiguous') {
    gate.reportFailure(probe, nowMs, hintMs, runtime.random);
  } else if (c.class !== 'not_sent') {
    // Any real answer that is not a failure proves the host is serving.
    gate.reportSuccess(probe, nowMs);
  }
}

/** On resume, a retry after a failure still passes the gate. */
function lastAttemptWasBudgeted(record: OperationRecord): boolean {
  const last = record.attempts[record.attempts.length - 1];
  return last?.class === 'retryable' || last?.class === 'ambiguous';
}

/** The idempotency key header, unless the policy or a safe method says not to send it. */
function keyHeaders(policy: ResolvedPolicy, record: OperationRecord): Record<string, string> {
  const headers: Record<string, string> = {};
  const method = record.request.method.toUpperCase();
  const sendKey = policy.sendKey ?? !SAFE_METHODS.has(method);
  if (sendKey) headers[policy.profile.keyHeader] = record.key;
  return headers;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Adds the `headers` callback's answer. A callback that throws, or does not
 * answer before the deadline, is data: the attempt is not sent.
 */
async function withCredentials(
  engine: Engine,
  credentials: NonNullable<Engine['credentials']>,
  headers: Record<string, string>,
  context: AttemptContext,
  deadlineAt: number,
): Promise<{ headers: Record<string, string> } | { error: unknown }> {
  let answer: Record<string, string> | undefined;
  const outcome = await callHook(
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
    undefined,
  );
  if (outcome === true) return { headers: Object.assign(headers, answer) };
  if (outcome === false) return { error: new Error('it did not answer before the deadline') };
  return { error: outcome.thrown };
}

function storedResult(
  output: AttemptOutput,
  policy: ResolvedPolicy,
  nowMs: number,
  extra: readonly string[],
): StoredResult {
  const status = output.observation.kind === 'response' ? output.observation.status : 0;
  const replayedHeader = policy.profile.replayedHeader?.toLowerCase();
  const body = storedBodyFrom(output.bytes, output.headers['content-type']);
  const result: StoredResult = {
    status,
    headers: storedResponseHeaders(output.headers, extra),
    replayed: replayedHeader !== undefined && output.headers[replayedHeader]?.toLowerCase() === 'true',
    receivedAt: nowMs,
  };
  // Assigned, not spread in: see `revise` in transitions.ts.
  if (body !== undefined) result.body = body;
  return result;
}
