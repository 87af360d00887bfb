/**
 * flow/transport/: how the bytes of one attempt move: this seam (`fetch` by
 * default), bodies read up to a ceiling and kept as bytes, attempt timeouts,
 * the caller's signal fanned out. It may import flow/request/ and
 * flow/decide/ (the observation's vocabulary), never the loop.
 *
 * The transport seam: one function that sends one request and says what
 * came back. The attempt (flow/drive/attempt.ts) owns everything around it (the
 * timeout, the caller's signal, header checks, whether a failure may have
 * been sent); a transport only moves bytes. The default calls `fetch`
 * (`defaultTransport`).
 *
 * Contract of a `Transport`:
 * - it resolves with what it observed: an answer (`kind: 'response'`, with
 *   the raw headers and at most `maxResponseBytes` of body), a redirect it
 *   did not follow, or a request it could not even build (`transport_error`
 *   with `sent: 'not'`, nothing left);
 * - it rejects when the exchange failed in flight (a reset, a refused
 *   connection, `signal` aborting): the attempt then decides, from the
 *   error's `code`, its own timer, the caller's signal and `Connectivity`,
 *   whether the request may have been applied;
 * - it never follows a redirect (but for a keyless read): the key and body would go wherever the
 *   server points, and an error on a later hop would hide that the first
 *   one may have been applied. Once it resolves with a redirect, the
 *   attempt aborts `signal`: nothing is to be read from it any more.
 *
 * Why no HTTP library: oncely has exactly one retry loop and times attempts
 * itself, so of ky (the default until issue 33) it used only the `Request`
 * it built, with retry, timeout, hooks and error throwing off, and sent the
 * body and signal beside it. That is `new Request(url, { method, headers })`
 * (a URL or header `fetch` refuses is refused there, synchronously, before
 * any byte left) and `fetch(url, init)` with its URL, method and headers:
 * the same bytes on the wire, 4.5 KB gzip less in a browser bundle. On Node
 * (undici) `fetch(request)` would build a second `Request` from the first
 * and pipe the body through a `TransformStream`: 200–350 µs of CPU per
 * request, so the built `Request` is never what is sent.
 *
 * Redirects on Node: a request whose redirect mode is not `error` is cloned
 * by the fetch algorithm before it goes out (its body teed into two
 * streams), which costs Node's fetch 80–220 µs of CPU per request, more than
 * all of oncely's own bookkeeping. So with Node's own `fetch`, oncely asks
 * for `redirect: 'error'`: a 301, 302, 303, 307 or 308 then rejects with
 * undici's "unexpected redirect", read here as a redirect whose status and
 * Location are hidden (as a browser's `opaqueredirect` hides them). Any other
 * `fetch` (a browser's, a wrapper passed in, a global replaced after oncely
 * loaded, Deno's, Bun's, one under a simulated DOM or in a worker) gets
 * `manual`, and its 3xx, `opaqueredirect` or followed response is read as
 * `redirectOf` says.
 */
import type { StoredBody } from '../../model.js';
import type { Observation } from '../decide/classify.js';
import { base64ToBytes } from '../request/bytes.js';
import { readCapped } from './read-body.js';

/** One request, as the attempt sends it: stored fields plus this attempt's headers, already checked. */
export interface TransportRequest {
  method: string;
  url: string;
  /** Every header of this attempt (stored ones, the key header, credentials). */
  headers: Record<string, string>;
  /** The stored body; `undefined` for none. */
  body: StoredBody | undefined;
  /** `'follow'`: a safe read sent without a key, whose redirects fetch follows (else never: see above). */
  redirect?: 'follow';
}

export interface TransportContext {
  /**
   * Aborts when the attempt times out or the caller gives up: stop and
   * reject. Also aborted once the transport resolved with a redirect, so
   * nothing goes on holding its connection, and once the attempt is over
   * (with reason `'attempt over'`), so that nothing keeps the signal alive.
   */
  signal: AbortSignal;
  /** The attempt's timeout, for information: the attempt enforces it through `signal`. */
  timeoutMs: number;
  /** Read at most this many body bytes; mark the observation `bodyTruncatedAtBytes` when there was more. */
  maxResponseBytes: number;
}

/** What came back, with everything needed to store a replayable result. */
export interface TransportResult {
  observation: Observation;
  /** Response headers (lower-case names) when there was an answer. */
  headers: Record<string, string>;
  /** Raw body bytes of the answer, when there was one. */
  bytes: Uint8Array | undefined;
}

/**
 * Sends one request. See the contract at the top of this module.
 *
 * @example
 * // A transport for tests: no network at all.
 * const transport: Transport = async () => ({
 *   observation: { kind: 'response', status: 201, header: () => null, text: '' },
 *   headers: {},
 *   bytes: new Uint8Array(),
 * });
 */
export type Transport = (request: TransportRequest, context: TransportContext) => Promise<TransportResult>;

/** A result with no answer (nothing was received). */
export function noAnswer(observation: Observation): TransportResult {
  return { observation, headers: {}, bytes: undefined };
}

/** Nothing could leave: the request could not be built. */
export function unsendable(message: string): Observation {
  return { kind: 'transport_error', sent: 'not', code: 'INVALID_REQUEST', message: `request not built: ${message}` };
}

/** `error.message` with its chain of causes. */
export function describe(error: Error): string {
  const cause = error.cause instanceof Error ? `: ${describe(error.cause)}` : '';
  return `${error.message}${cause}`;
}

/**
 * The default transport: `fetch` with the body and signal of this attempt
 * and the redirect mode described at the top of this module.
 *
 * @param fetch the fetch to call, looked up per request so a replaced
 *   `globalThis.fetch` is honoured.
 */
export function defaultTransport(fetch: () => typeof globalThis.fetch): Transport {
  return async (request, context) => {
    const follow = request.redirect === 'follow';
    let built: Request;
    try {
      built = new Request(request.url, { method: request.method, headers: request.headers });
    } catch (error) {
      // A refusal while the request is built is before any byte left.
      return noAnswer(unsendable(error instanceof Error ? describe(error) : String(error)));
    }
    let response: Response;
    try {
      const send = fetch();
      response = await send(built.url, {
        method: built.method,
        headers: built.headers,
        body: bodyInit(request.body) ?? null,
        signal: context.signal,
        redirect: follow ? 'follow' : send === NODE_FETCH ? 'error' : 'manual',
      });
    } catch (error) {
      // Not when the signal aborted: fetch then rejects with the abort's reason, whatever it looks like.
      if (!context.signal.aborted && isRefusedRedirect(error)) return noAnswer(hiddenRedirect());
      throw error;
    }
    const redirect = follow ? undefined : redirectOf(response);
    if (redirect !== undefined) {
      response.body?.cancel().catch(() => undefined);
      return noAnswer(redirect);
    }
    const { bytes, truncated } = await readCapped(response, context.maxResponseBytes);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
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
    if (truncated) observation.bodyTruncatedAtBytes = context.maxResponseBytes;
    return { observation, headers, bytes };
  };
}

/**
 * A redirect, as the platform shows it under `redirect: 'manual'`: Node
 * (undici, through a wrapper) gives the 3xx itself, a browser an
 * `opaqueredirect` (status 0, no headers). A `fetch` that
 * followed anyway (one passed in that ignores `redirect`) says so by
 * `redirected`.
 */
function redirectOf(response: Response): Observation | undefined {
  if (response.type === 'opaqueredirect') return hiddenRedirect();
  if (response.redirected) return { kind: 'redirect', status: undefined, location: response.url, followed: true };
  if (response.status < 300 || response.status >= 400) return undefined;
  return { kind: 'redirect', status: response.status, location: response.headers.get('location') ?? undefined };
}

/** A redirect whose status and Location the platform did not show (a browser's `opaqueredirect`, Node's refused redirect). */
function hiddenRedirect(): Observation {
  return { kind: 'redirect', status: undefined, location: undefined };
}

/**
 * A `fetch` refusing a redirect under `redirect: 'error'`. Node's (undici)
 * rejects with `TypeError('fetch failed')` caused by `Error('unexpected
 * redirect')`, the same on Node 20, 22 and 24 (`npm test` runs the
 * redirects test on 20 and 22). Read by shape, not `instanceof`: under a vm
 * context (Jest's node environment) the error comes from another realm.
 * Also the shapes of `fetch`es that may stand in for Node's before oncely
 * loads: @mswjs/interceptors (the cause as a string) and node-fetch
 * (`type: 'no-redirect'`). An answer came, so this is never a failure in flight.
 */
export function isRefusedRedirect(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { cause, type } = error as { cause?: unknown; type?: unknown };
  const causeMessage = typeof cause === 'object' && cause !== null ? (cause as { message?: unknown }).message : cause;
  return causeMessage === 'unexpected redirect' || type === 'no-redirect';
}

/**
 * Node's own `fetch` as `scope` holds it; `undefined` anywhere else: in a
 * browser, in Deno or Bun (which call themselves Node in
 * `process.release.name` but refuse redirects in other shapes), and where a
 * DOM is simulated (`document`: happy-dom, jsdom, an Electron renderer), and
 * in a worker (an Electron worker with Node integration fetches with Chromium).
 */
export function nodesOwnFetch(scope: object): typeof globalThis.fetch | undefined {
  const { process, Deno, document, WorkerGlobalScope, fetch } = scope as {
    process?: { release?: { name?: unknown }; versions?: Record<string, unknown> };
    Deno?: unknown;
    document?: unknown;
    WorkerGlobalScope?: unknown;
    fetch?: unknown;
  };
  const isNode =
    process?.release?.name === 'node' &&
    process.versions?.bun === undefined &&
    process.versions?.deno === undefined &&
    Deno === undefined &&
    document === undefined &&
    // An Electron worker with Node integration: Chromium's fetch.
    WorkerGlobalScope === undefined;
  return isNode && typeof fetch === 'function' ? (fetch as typeof globalThis.fetch) : undefined;
}

/**
 * Node's own `fetch`, as the global was when oncely loaded. Only it is asked
 * to refuse redirects (see the top of this module): a global replaced since
 * is compared by identity and gets `manual`.
 */
const NODE_FETCH = nodesOwnFetch(globalThis);

/**
 * `globalThis.fetch` is still Node's own, the one oncely found as it loaded:
 * nothing (msw, a stub, an app's wrapper) has been put in its place since.
 * False outside Node (see `nodesOwnFetch`).
 */
export function isNodesOwnFetchInPlace(): boolean {
  return NODE_FETCH !== undefined && globalThis.fetch === NODE_FETCH;
}

/** Stateless between calls (no `stream` option): one instance serves every attempt. */
const utf8 = new TextDecoder();

/** A `fetch` body, named the way both DOM and Node's type libraries know it. */
type FetchBody = NonNullable<RequestInit['body']>;

function bodyInit(body: StoredBody | undefined): FetchBody | undefined {
  if (body === undefined) return undefined;
  switch (body.encoding) {
    case 'json':
    case 'text':
      return body.text;
    case 'base64':
      return base64ToBytes(body.data);
  }
}
