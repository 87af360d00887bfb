/**
 * One HTTP attempt through ky, with ky's own retry and timeout turned off:
 * oncely has exactly one retry loop (flow/run.ts) and times attempts itself
 * through the injectable runtime. Returns an `Observation`; never throws for
 * network trouble (that is data for `classify`).
 *
 * Performance (see BENCHMARKS.md): ky builds a `Request` and hands it to
 * `fetch(request, init)`. On Node (undici) that path builds a second
 * `Request` from the first, pipes the body through a `TransformStream`
 * (the spec's "proxy" of a used body) and follows the abort signal twice:
 * 200–350 µs of CPU per request, the larger part of ky's cost over bare
 * `fetch`. So the body and the abort signal travel beside ky's request
 * (`DIRECT_OPTION`, which ky forwards to its `fetch` untouched) and
 * `directFetch` calls `fetch(url, init)` with ky's URL, method and headers.
 * ky still resolves the request; oncely sets no ky hooks that could want
 * the body.
 *
 * Redirects are never followed (`redirect: 'manual'`): the key and the body
 * would go to wherever the server points, and an error on a later hop would
 * hide that the first one may have been applied. A 3xx (or a browser's
 * `opaqueredirect`) is an observation of its own.
 */
import type { KyInstance, Options } from 'ky';
import type { StoredBody, StoredRequest } from '../model.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../policy/request-policy.js';
import type { Runtime } from '../runtime.js';
import { onAbort } from './abort.js';
import { base64ToBytes } from './bytes.js';
import { isNotSentCode, type Observation } from './classify.js';
import { readCapped } from './read-body.js';
import { attemptTimeouts } from './timeouts.js';
import { headerProblem } from './validate.js';

export interface AttemptInput {
  request: StoredRequest;
  /** Headers for this attempt only: the key header and fresh credentials. Never stored. */
  extraHeaders: Record<string, string>;
  timeoutMs: number;
  /** The caller's signal for the whole operation. */
  signal: AbortSignal | undefined;
  /** Largest body read, in bytes (the endpoint's `maxResponseBytes`). @default 1_048_576 */
  maxResponseBytes?: number;
}

/** What came back, with everything needed to store a replayable result. */
export interface AttemptOutput {
  observation: Observation;
  /** Response headers (lower-case names) when there was an answer. */
  headers: Record<string, string>;
  /** Raw body bytes of the answer, when there was one; `undefined` for a 2xx body over the limit (not kept). */
  bytes: Uint8Array | undefined;
}

export async function performAttempt(http: KyInstance, runtime: Runtime, input: AttemptInput): Promise<AttemptOutput> {
  const { request, signal } = input;
  if (signal?.aborted) return noAnswer({ kind: 'aborted', sent: 'not' });
  if (isKnownOffline()) {
    return noAnswer({ kind: 'transport_error', sent: 'not', code: 'OFFLINE', message: 'the browser is offline' });
  }
  // The `headers` callback's answer is only known now: a header `fetch` would
  // refuse is a failure before any byte left, never an attempt that may have been sent.
  const headers: Record<string, string> = Object.assign({}, request.headers, input.extraHeaders);
  for (const name in headers) {
    const value = headers[name];
    // Values that are not strings are ky's to convert or drop (`undefined` removes a header).
    const problem = headerProblem(name, typeof value === 'string' ? value : '');
    if (problem !== undefined) return noAnswer(unsendable(`header ${name} ${problem}`));
  }
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
  try {
    const options: Options & { [DIRECT_OPTION]?: DirectBody } = {
      method: request.method,
      headers,
      redirect: 'manual',
      [DIRECT_OPTION]: { body: bodyInit(request.body) ?? null, signal: controller.signal },
    };
    let pending: Promise<Response>;
    try {
      pending = http(request.url, options);
    } catch (error) {
      // ky builds its `Request` synchronously: a refusal there is before any byte left.
      return noAnswer(unsendable(error instanceof Error ? describe(error) : String(error)));
    }
    const response = await pending;
    const redirect = redirectOf(response);
    if (redirect !== undefined) {
      response.body?.cancel().catch(() => undefined);
      return noAnswer(redirect);
    }
    // Read the body inside the timeout: a 2xx whose body was lost is
    // ambiguous, and the retry gets the server's stored replay instead.
    const limitBytes = input.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    const { bytes, truncated } = await readCapped(response, limitBytes);
    const answer: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      answer[name] = value;
    });
    const observation: Observation = {
      kind: 'response',
      status: response.status,
      header: (name) => response.headers.get(name),
      // Only body rules of non-2xx answers read it: decoded on demand, not on every attempt.
      get text() {
        return utf8.decode(bytes);
      },
    };
    if (truncated) observation.bodyTruncatedAtBytes = limitBytes;
    // A cut-off 2xx body is not kept: a prefix would be replayed as if it were the answer.
    const ok = response.status >= 200 && response.status < 300;
    return { observation, headers: answer, bytes: truncated && ok ? undefined : bytes };
  } catch (error) {
    if (timedOut) return noAnswer({ kind: 'timeout', afterMs: input.timeoutMs });
    if (signal?.aborted) return noAnswer({ kind: 'aborted', sent: 'maybe' });
    return noAnswer(transportError(error));
  } finally {
    stopTimeout();
    offCallerAbort?.();
  }
}

/**
 * A redirect, as the platform shows it: Node (undici) gives the 3xx itself,
 * a browser an `opaqueredirect` (status 0, no headers). A `fetch` that
 * followed anyway (one passed in that ignores `redirect`) says so by
 * `redirected`.
 */
function redirectOf(response: Response): Observation | undefined {
  if (response.type === 'opaqueredirect') return { kind: 'redirect', status: undefined, location: undefined };
  if (response.redirected) return { kind: 'redirect', status: undefined, location: response.url, followed: true };
  if (response.status < 300 || response.status >= 400) return undefined;
  return { kind: 'redirect', status: response.status, location: response.headers.get('location') ?? undefined };
}

/** Nothing could leave: `fetch` (or ky) refused to build the request. */
function unsendable(message: string): Observation {
  return { kind: 'transport_error', sent: 'not', code: 'INVALID_REQUEST', message: `request not built: ${message}` };
}

/** Stateless between calls (no `stream` option): one instance serves every attempt. */
const utf8 = new TextDecoder();

/** The name of the ky option that carries the body and signal past ky's `Request` (ky forwards unknown options to `fetch`). */
export const DIRECT_OPTION = 'oncelyDirect';

interface DirectBody {
  body: BodyInit | null;
  signal: AbortSignal;
}

/**
 * The `fetch` oncely gives ky: when ky passes its `Request` along with the
 * direct body, sends `fetch(url, init)` instead of `fetch(request)`, which
 * on Node re-creates the request and streams the body through a
 * `TransformStream`. Anything else goes to `fetch` as ky gave it.
 *
 * @param base the fetch to call, looked up per request (as ky does) so a
 *   replaced `globalThis.fetch` is honoured.
 */
export function directFetch(base: () => typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => {
    const direct = (init as { [DIRECT_OPTION]?: DirectBody } | undefined)?.[DIRECT_OPTION];
    if (direct === undefined || !(input instanceof Request)) return base()(input, init);
    // ky's other options for fetch (usually none), then the request's own.
    // Copied key by key: rest-destructuring and spreading in new keys cost
    // microseconds per request on Node 20.
    const sent: RequestInit & Record<string, unknown> = {};
    for (const key in init) if (key !== DIRECT_OPTION) sent[key] = (init as Record<string, unknown>)[key];
    sent.method = input.method;
    sent.headers = input.headers;
    sent.body = direct.body;
    sent.signal = direct.signal;
    // Whatever ky or the caller passed: a keyed request never follows a redirect.
    sent.redirect = 'manual';
    return base()(input.url, sent);
  };
}

function noAnswer(observation: Observation): AttemptOutput {
  return { observation, headers: {}, bytes: undefined };
}

/** `navigator.onLine === false` is trustworthy; `true` is not (captive portals, dead Wi-Fi). */
function isKnownOffline(): boolean {
  const nav = (globalThis as { navigator?: { onLine?: boolean } }).navigator;
  return nav?.onLine === false;
}

/** Maps fetch failures to sent/not-sent. Only errors that prove nothing left are `not`. */
function transportError(error: unknown): Observation {
  const code = errorCode(error);
  const message = error instanceof Error ? describe(error) : String(error);
  if (isNotSentCode(code)) return { kind: 'transport_error', sent: 'not', code, message };
  if (isKnownOffline()) return { kind: 'transport_error', sent: 'not', code: 'OFFLINE', message };
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

function describe(error: Error): string {
  const cause = error.cause instanceof Error ? `: ${describe(error.cause)}` : '';
  return `${error.message}${cause}`;
}

function bodyInit(body: StoredBody | undefined): BodyInit | undefined {
  if (body === undefined) return undefined;
  switch (body.encoding) {
    case 'json':
    case 'text':
      return body.text;
    case 'base64':
      return base64ToBytes(body.data);
  }
}
