/**
 * One HTTP attempt through the injected `Transport` (flow/transport/transport.ts;
 * ky by default). Returns an `Observation`; never throws for network
 * trouble (that is data for `classify`).
 *
 * The attempt owns what does not depend on how bytes move: the headers
 * `fetch` would refuse (checked before anything leaves), the attempt
 * timeout (on the injectable runtime, ky's own is off: oncely times
 * attempts itself), the link to the caller's signal, and the judgement of
 * a failure: timed out, aborted, or a transport error that may or may not
 * have been sent. Whether the platform is offline comes only from the
 * injected `Connectivity`.
 */
import type { StoredRequest } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../../policy/request-policy.js';
import type { Runtime } from '../../runtime.js';
import type { Observation } from '../decide/classify.js';
import { isNotSentCode } from '../decide/not-sent.js';
import type { Connectivity } from '../engine/engine.js';
import { headerProblem } from '../request/validate.js';
import { onAbort } from '../transport/abort.js';
import { attemptTimeouts } from '../transport/timeouts.js';
import { describe, noAnswer, type Transport, type TransportResult, unsendable } from '../transport/transport.js';
import { SAFE_METHODS, sendsKey } from './outcome.js';

/** The reason an attempt's signal aborts with once its answer was a redirect (a constant: no stack per abort). */
const REDIRECT_DROPPED = new Error('redirect not followed: its body is not read');
/** The reason an attempt's signal aborts with once the attempt is over (a string: no stack per abort). */
export const ATTEMPT_OVER = 'attempt over';

export interface AttemptInput {
  request: StoredRequest;
  /** Headers for this attempt only: the key header and fresh credentials. Never stored. */
  extraHeaders: Record<string, string>;
  timeoutMs: number;
  /** The caller's signal for the whole operation. */
  signal: AbortSignal | undefined;
  /** Largest body read, in bytes (the endpoint's `maxResponseBytes`). @default 1_048_576 */
  maxResponseBytes?: number;
  /** Follow redirects as fetch does (a safe read sent without a key); else a 3xx is the answer. @default false */
  followRedirects?: boolean;
  /**
   * What the platform knows about the network: offline before sending,
   * nothing is sent. (Offline once a request failed proves nothing: the
   * link may have dropped after the server had it, and a connectivity may
   * report "offline" on mere suspicion, as the browser client's does.)
   * @default none (never known offline)
   */
  connectivity?: Connectivity | undefined;
  /**
   * Whether this owner's lease still covers the whole attempt, asked right
   * before the bytes leave (lease-check.ts); no: nothing is sent.
   * @default always
   */
  leaseHeld?: (() => boolean) | undefined;
  /**
   * Called once the request may leave (every check above passed) with an
   * empty object: headers put there are added for this request alone,
   * unless one of that name is set already or `fetch` would refuse it (the
   * `attempt:sending` event).
   * @default none
   */
  beforeSend?: ((headers: Record<string, string>) => void) | undefined;
}

/** What the transport saw; `bytes` is `undefined` for a 2xx body over the limit (not kept). */
export type AttemptOutput = TransportResult;

/** A safe read sent without a key follows redirects as fetch does; anything keyed treats a 3xx as its answer. */
export function followsRedirects(policy: Pick<ResolvedPolicy, 'sendKey'>, method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase()) && !sendsKey(policy, method);
}

export async function performAttempt(
  transport: Transport,
  runtime: Runtime,
  input: AttemptInput,
): Promise<AttemptOutput> {
  const { request, signal, connectivity } = input;
  if (signal?.aborted) return noAnswer({ kind: 'aborted', sent: 'not' });
  if (isKnownOffline(connectivity)) {
    return noAnswer({ kind: 'transport_error', sent: 'not', code: 'OFFLINE', message: 'the platform is offline' });
  }
  // The `headers` callback's answer is only known now: a header `fetch` would
  // refuse is a failure before any byte left, never an attempt that may have been sent.
  const headers: Record<string, string> = Object.assign({}, request.headers, input.extraHeaders);
  for (const name in headers) {
    const value = headers[name];
    // Values that are not strings are the transport's to convert or drop (ky: `undefined` removes a header).
    const problem = headerProblem(name, typeof value === 'string' ? value : '');
    if (problem !== undefined) return noAnswer(unsendable(`header ${name} ${problem}`));
  }
  // Last, right before the transport: a pause since the attempt's start was written may have cost the lease.
  if (input.leaseHeld?.() === false) {
    return noAnswer({
      kind: 'transport_error',
      sent: 'not',
      code: 'LEASE_EXPIRED',
      message: "this owner's lease ran out before the request was sent",
    });
  }
  if (input.beforeSend !== undefined) addHeaders(headers, input.beforeSend);
  // One controller per attempt, linked to the caller's signal by a listener
  // that is removed afterwards (AbortSignal.any over a long-lived parent
  // retains memory per call on Node 20).
  const controller = new AbortController();
  const offCallerAbort = signal === undefined ? undefined : onAbort(signal, () => controller.abort(signal.reason));
  let timedOut = false;
  const stopTimeout = attemptTimeouts(runtime).start(input.timeoutMs, () => {
    timedOut = true;
    controller.abort(new Error('attempt timeout'));
  });
  const maxResponseBytes = input.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  try {
    // The body is read inside the timeout: a 2xx whose body was lost is
    // ambiguous, and the retry gets the server's stored replay instead.
    const result = await transport(
      {
        method: request.method,
        url: request.url,
        headers,
        body: request.body,
        ...(input.followRedirects === true ? { redirect: 'follow' as const } : {}),
      },
      { signal: controller.signal, timeoutMs: input.timeoutMs, maxResponseBytes },
    );
    const { observation } = result;
    // Nobody reads a redirect's body. Node's fetch, refusing one, leaves no
    // response to cancel and would hold its connection open: the abort lets it go.
    if (observation.kind === 'redirect') controller.abort(REDIRECT_DROPPED);
    // A cut-off 2xx body is not kept: a prefix would be replayed as if it were the answer.
    const cutOk =
      observation.kind === 'response' &&
      observation.bodyTruncatedAtBytes !== undefined &&
      observation.status >= 200 &&
      observation.status < 300;
    return cutOk ? { ...result, bytes: undefined } : result;
  } catch (error) {
    if (timedOut) return noAnswer({ kind: 'timeout', afterMs: input.timeoutMs });
    if (signal?.aborted) return noAnswer({ kind: 'aborted', sent: 'maybe' });
    return noAnswer(transportError(error));
  } finally {
    stopTimeout();
    offCallerAbort?.();
    // Aborted once over, whatever the end: Node's fetch (undici) keeps each
    // request's signal, with its listener, in a finalization registry until
    // that signal aborts, else until a full GC has collected the request
    // and a cleanup task ran. Under a steady stream of attempts (resume at
    // 100k) that is every attempt since the last full GC, live at each one:
    // ~2.5 MB, which V8 multiplies by its heap growing factor (up to 4×) to
    // size the old generation (issue 33; BENCHMARKS.md "Resume at scale").
    // The exchange is done (the body read or cancelled, or failed), so the
    // abort cuts nothing short; it costs an abort event (~30 µs).
    if (!controller.signal.aborted) controller.abort(ATTEMPT_OVER);
  }
}

/** Adds the headers `fill` gives to `headers`, never replacing one already set (any case) nor one `fetch` would refuse. */
function addHeaders(headers: Record<string, string>, fill: (added: Record<string, string>) => void): void {
  const added: Record<string, string> = {};
  fill(added);
  const names = Object.keys(headers).map((name) => name.toLowerCase());
  for (const name in added) {
    const value = added[name] as string;
    if (!names.includes(name.toLowerCase()) && !headerProblem(name, value)) headers[name] = value;
  }
}

/** Offline comes only from the injected `Connectivity` (by default `navigator.onLine === false`). */
function isKnownOffline(connectivity: Connectivity | undefined): boolean {
  return connectivity !== undefined && !connectivity.online();
}

/**
 * Maps transport failures to sent/not-sent. Only errors that prove nothing
 * left are `not`: being offline by the time the failure is seen is no such
 * proof, so it is not consulted here.
 */
function transportError(error: unknown): Observation {
  const code = errorCode(error);
  const message = error instanceof Error ? describe(error) : String(error);
  if (isNotSentCode(code)) return { kind: 'transport_error', sent: 'not', code, message };
  return { kind: 'transport_error', sent: 'maybe', code, message };
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      current = errors[0];
      continue;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
