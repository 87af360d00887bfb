/**
 * Typed events for every transition of an operation. Listeners run
 * synchronously after the transition is durable; a throwing listener is
 * isolated (reported to `error` listeners) and never breaks the operation.
 * Two run before what they name, for instrumentation to add to it:
 * `creating` (the trace context stored) and `attempt:sending` (headers).
 */
import type { AttemptClass, OperationState, StopReason, StoredTrace } from './model.js';

interface Base {
  /** The idempotency key. */
  key: string;
  /** `METHOD url` of the operation. */
  operation: string;
  fingerprint: string;
  /** The trace context stored with the operation at its write-ahead (see `creating`), when there is one. */
  trace?: StoredTrace | undefined;
}

export interface OncelyEvents {
  /**
   * `send` or `enqueue` was called, in the caller's (async) context, before
   * the write-ahead. A listener may set `trace`: it is stored with a new
   * operation (not with one already stored under its key). `oncely/opentelemetry`
   * sets the active trace context here.
   */
  creating: { trace?: StoredTrace };
  /** A new operation was written down (before its first attempt). */
  enqueued: Base & { policy: string; deadlineAt: number };
  /** An attempt is recorded as started and is about to be sent. */
  'attempt:started': Base & { attempt: number; resendCount: number };
  /**
   * The attempt's request passed the checks before sending (online, headers,
   * lease) and is handed to the transport now: from here it may reach the
   * server. A listener may add headers to `headers` for this request alone
   * (never stored, never part of the fingerprint, never overriding a header
   * already set): `oncely/opentelemetry` injects `traceparent` there.
   */
  'attempt:sending': Base & { attempt: number; resendCount: number; headers: Record<string, string> };
  /** An attempt ended; its outcome is recorded. */
  'attempt:ended': Base & {
    attempt: number;
    resendCount: number;
    class: AttemptClass;
    status: number | undefined;
    detail: string;
    durationMs: number;
  };
  /** Another attempt is scheduled. */
  'retry:scheduled': Base & { attempt: number; delayMs: number; reason: AttemptClass; hintMs: number | undefined };
  /** The host's outage gate is open (its retry budget ran dry): this retry is held until `untilMs` or until the gate changes. */
  held: Base & { untilMs: number };
  /**
   * The operation reached a terminal state. `attempts`: those that may have reached the server (as on
   * `SendResult`); `notSent`: tries that never left; `mayHaveTakenEffect`: some attempt may have reached the
   * server and taken effect (as on a failed outcome).
   */
  settled: Base & {
    state: OperationState;
    reason: StopReason | undefined;
    attempts: number;
    notSent: number;
    mayHaveTakenEffect: boolean;
  };
  /**
   * A verdict on an `unknown` operation was recorded: by its `reconcile`
   * hook or by `settle`. `error`: the hook threw or answered nonsense (the
   * operation stays `unknown`); `nextCheckAt`: when the next check is due.
   */
  reconciled: {
    key: string;
    by: 'hook' | 'settle';
    verdict: 'applied' | 'not_applied' | 'unknown';
    state: OperationState;
    error: string | undefined;
    nextCheckAt: number | undefined;
  };
  /** A corrupt stored record was moved aside. */
  quarantined: { id: string; problems: readonly string[] };
  /** A listener threw, or a background sweep failed (`event: 'sweep'`). */
  error: { error: unknown; event: string };
}

export type OncelyEventName = keyof OncelyEvents;
export type Listener<E extends OncelyEventName> = (payload: OncelyEvents[E]) => void;

/**
 * A typed event emitter: listeners run synchronously, and one that throws is
 * isolated and reported through `onListenerError`, never breaking the emitter.
 */
export class TypedEmitter<M extends object> {
  readonly #listeners = new Map<keyof M, Set<(payload: never) => void>>();
  readonly #onListenerError: (error: unknown, event: keyof M) => void;

  constructor(onListenerError: (error: unknown, event: keyof M) => void) {
    this.#onListenerError = onListenerError;
  }

  on<E extends keyof M>(event: E, fn: (payload: M[E]) => void): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(fn as (payload: never) => void);
    return () => set.delete(fn as (payload: never) => void);
  }

  /** True when `event` has a listener: callers skip building a payload nobody reads (it is on every request's path). */
  listens(event: keyof M): boolean {
    const set = this.#listeners.get(event);
    return set !== undefined && set.size > 0;
  }

  emit<E extends keyof M>(event: E, payload: M[E]): void {
    const set = this.#listeners.get(event);
    if (set === undefined) return;
    for (const fn of [...set]) {
      try {
        (fn as (payload: M[E]) => void)(payload);
      } catch (error) {
        this.#onListenerError(error, event);
      }
    }
  }
}

/** The core client's events; a throwing listener is reported as `error`. */
export class Emitter extends TypedEmitter<OncelyEvents> {
  constructor() {
    super((error, event) => {
      if (event !== 'error') this.emit('error', { error, event });
    });
  }
}
