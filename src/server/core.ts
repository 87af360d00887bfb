/**
 * The middleware's one path, for every framework: route → key → scope →
 * fingerprint → one atomic claim → run the handler, or answer from the
 * record (replay, 409 in progress, 409 outcome unknown, 422 key reused).
 * The outcome is stored before the response leaves, so a client that loses
 * the response gets it replayed; a handler that throws is not a response
 * and is never stored: its claim ends as "outcome unknown".
 *
 * Every guarded request pays for this path, so it builds nothing it does
 * not need: the entry points hand it an `Incoming` (parsed once), and a
 * `Request` is handed on only when something asks for one (a view of what
 * was read, request-view.ts).
 */
import { InvalidOptionsError } from '../errors.js';
import { matchesEndpoint, selectEndpoint } from '../policy/endpoints.js';
import { fingerprintOf, parseJsonBody } from './fingerprint.js';
import { Heartbeats } from './heartbeat.js';
import { readKey } from './key.js';
import { claimAtOnce } from './memory-store.js';
import type { NodeRequestLike } from './node.js';
import type { Resolved, ResolvedRoute } from './options.js';
import { problems } from './problems.js';
import { type Answer, type HeaderSource, keeps, replayOf, storedOf } from './replay.js';
import { ReadRequestView, RequestView } from './request-view.js';
import { type Claim, type ClaimRequest, type ClaimResult, LeaseTakenOverError } from './store.js';
import { urlParts } from './target.js';

/** A guarded request as an entry point read it. */
export interface Incoming {
  /** Upper case. */
  method: string;
  /** Path and query, as sent. */
  target: string;
  route: ResolvedRoute;
  /** The key header's value (`null`: absent). */
  keyValue: string | null;
  contentType: string | null;
  body: Uint8Array;
  /** The body parsed as JSON already (the Node middleware parses once, for itself and the fingerprint). */
  json: { value: unknown } | undefined;
  /** The request as a Fetch `Request`, built on first call (for `scopeOf` and Fetch handlers). */
  request(): Request;
  /** The entry point has its own way to the caller's identity (`nodeScopeOf`): `caller()`; else `scopeOf(request())`. */
  readonly ownCaller: boolean;
  caller(): string | Promise<string>;
}

/**
 * A request the middleware guards, everything known about it before the
 * claim (a class: it holds the entry point's request, see node-response.ts
 * on objects that do).
 */
class Guarded {
  constructor(
    readonly incoming: Incoming,
    readonly route: ResolvedRoute,
    readonly key: string,
    readonly caller: string,
    readonly scope: string,
  ) {}
}

/**
 * The handler, answering read-to-the-end responses (the entry points adapt
 * their own kind). A plain handler gets the entry point's `Incoming` back:
 * one runner serves every request, with no closure made per request.
 */
export type Runner<Tx, H extends HeaderSource = Headers> =
  | { kind: 'plain'; handler: (incoming: Incoming) => Promise<Answer<H>> }
  | { kind: 'transaction'; handler: (tx: Tx, request: Request) => Promise<Answer<H>> };

const BODYLESS = new Set(['GET', 'HEAD']);
const EMPTY = new Uint8Array(0);

export class IdempotencyCore<Tx> {
  readonly #o: Resolved<Tx>;
  readonly #heartbeats: Heartbeats;
  /** The one route's path when it has no wildcard (`/payments`): a request for exactly it needs no matcher. */
  readonly #literalPath: string | undefined;

  constructor(resolved: Resolved<Tx>) {
    this.#o = resolved;
    const only = resolved.routes.length === 1 ? resolved.routes[0] : undefined;
    const segments = only?.pattern.segments;
    this.#literalPath =
      segments === undefined || segments.some((s) => s === '*' || s === '**') ? undefined : `/${segments.join('/')}`;
    const shortestLeaseMs = Math.min(...resolved.routes.map((r) => r.leaseMs));
    this.#heartbeats = new Heartbeats(resolved.store, resolved.schedule, shortestLeaseMs);
  }

  /** `options.scopeOf`; checked by the entry points that need it when they are made. */
  scopeOf(request: Request): string | Promise<string> {
    return (this.#o.scopeOf as (request: Request) => string | Promise<string>)(request);
  }

  /** `options.nodeScopeOf`, if given. */
  get nodeScopeOf(): ((req: NodeRequestLike) => string | Promise<string>) | undefined {
    return this.#o.nodeScopeOf;
  }

  /** Throws, naming the option, when `scopeOf` was not given (`nodeScopeOf` alone serves the middleware only). */
  requireScopeOf(entry: string): void {
    if (this.#o.scopeOf === undefined) {
      throw new InvalidOptionsError(
        'idempotency.scopeOf',
        `is required by ${entry} (nodeScopeOf serves the Node middleware only)`,
      );
    }
  }

  /** The header holding the key, as configured. */
  get keyHeader(): string {
    return this.#o.keyHeader;
  }

  /** The route guarding `method` and `pathname`, if any (the Node middleware skips reading other bodies). */
  routeOf(method: string, pathname: string): ResolvedRoute | undefined {
    const { routes } = this.#o;
    // One route (the common case): no ranking to do.
    if (routes.length === 1) {
      const only = routes[0] as ResolvedRoute;
      // `method` is upper case already, as patterns hold it; any other path goes through the matcher.
      if (pathname === this.#literalPath && (only.pattern.method === undefined || only.pattern.method === method)) {
        return only;
      }
      return matchesEndpoint(only.pattern, method, pathname) ? only : undefined;
    }
    return routes[
      selectEndpoint(
        routes.map((r) => r.pattern),
        method,
        pathname,
      )
    ];
  }

  /**
   * The Fetch entry point's reading of `request`; `undefined` when it is not
   * guarded (no route, or no key where one is optional), before any body is
   * read. The body of a guarded request with a key is read here once, as
   * bytes (for the fingerprint) and parsed as JSON (for the fingerprint and
   * the handler's first `json()`).
   */
  async incomingOf(request: Request): Promise<Incoming | undefined> {
    const method = request.method.toUpperCase();
    const url = request.url;
    const { pathname, search } = urlParts(url);
    const route = this.routeOf(method, pathname);
    if (route === undefined) return undefined;
    const keyValue = request.headers.get(this.#o.keyHeader);
    if (keyValue === null && !route.requireKey) return undefined;
    const contentType = request.headers.get('content-type');
    const body = keyValue === null || BODYLESS.has(method) ? EMPTY : new Uint8Array(await request.arrayBuffer());
    return new FetchIncoming(request, url, method, pathname + search, route, keyValue, contentType, body);
  }

  /** The Fetch entry point of `withIdempotency`: a request it does not guard runs in a transaction, unguarded. */
  async handle<H extends HeaderSource>(
    request: Request,
    runner: Extract<Runner<Tx, H>, { kind: 'transaction' }>,
  ): Promise<Answer<H> | Answer> {
    const incoming = await this.incomingOf(request);
    return incoming === undefined ? this.#transactUnguarded(request, runner.handler) : this.guard(incoming, runner);
  }

  /**
   * A request on a guarded route, read by its entry point: its answer, or
   * the promise of it. Not an async function: with a caller's identity, a
   * hash and a claim all at hand at once (`nodeScopeOf` or `scopeOf`
   * answering a string, Node's hash, the memory store), nothing here waits,
   * and each async layer or `await` costs turns of the queue and a few
   * hundred bytes of garbage on every request. A store or a hook that
   * answers with a promise is waited for (`.then`).
   */
  guard<H extends HeaderSource>(
    incoming: Incoming,
    runner: Runner<Tx, H>,
  ): Answer<H> | Answer | Promise<Answer<H> | Answer> {
    const { keyHeader } = this.#o;
    const { route } = incoming;
    const reading = readKey(incoming.keyValue, this.#o);
    if (reading.kind === 'missing') {
      if (route.requireKey) return problems.keyMissing(keyHeader);
      return runner.kind === 'plain'
        ? runner.handler(incoming)
        : this.#transactUnguarded(incoming.request(), runner.handler);
    }
    if (reading.kind === 'invalid') return problems.keyInvalid(keyHeader, reading.reason);
    const key = reading.key;
    const named = incoming.ownCaller ? incoming.caller() : this.scopeOf(incoming.request());
    return typeof named === 'string'
      ? this.#fingerprinted(incoming, runner, key, named)
      : named.then((caller) => this.#fingerprinted(incoming, runner, key, caller));
  }

  #fingerprinted<H extends HeaderSource>(
    incoming: Incoming,
    runner: Runner<Tx, H>,
    key: string,
    caller: string,
  ): Answer<H> | Answer | Promise<Answer<H> | Answer> {
    const { route, method } = incoming;
    const guarded = new Guarded(incoming, route, key, caller, JSON.stringify([method, route.source, caller]));
    const hashed = fingerprintOf(method, incoming.target, incoming.body, incoming.contentType, incoming.json);
    return typeof hashed === 'string'
      ? this.#claim(guarded, hashed, runner)
      : hashed.then((fingerprint) => this.#claim(guarded, fingerprint, runner));
  }

  #claim<H extends HeaderSource>(
    g: Guarded,
    fingerprint: string,
    runner: Runner<Tx, H>,
  ): Answer<H> | Answer | Promise<Answer<H> | Answer> {
    const { store } = this.#o;
    const request: ClaimRequest = {
      scope: g.scope,
      key: g.key,
      fingerprint,
      leaseMs: g.route.leaseMs,
      retentionMs: g.route.retentionMs,
      rerunAbandoned: g.route.rerun === 'safe',
      atomic: runner.kind === 'transaction',
    };
    // The memory store decides a claim at once: its answer is taken as it is, not awaited.
    const atOnce = claimAtOnce(store, request);
    if (atOnce !== undefined) return this.#answer(g, atOnce, runner);
    return store.claim(request).then((result) => this.#answer(g, result, runner));
  }

  /**
   * The answer to a claim's result: at once from the record, or the run's
   * promise (no async layer of its own: each costs turns of the queue on
   * every request).
   */
  #answer<H extends HeaderSource>(
    g: Guarded,
    result: ClaimResult,
    runner: Runner<Tx, H>,
  ): Answer<H> | Answer | Promise<Answer<H> | Answer> {
    const { keyHeader } = this.#o;
    switch (result.kind) {
      case 'mismatch':
        return problems.keyReused(keyHeader);
      case 'in_progress':
        return problems.inProgress(keyHeader, g.route.retryAfterMs);
      case 'completed':
        return replayOf(result.response);
      case 'abandoned':
        return this.#abandoned(g, result.firstReport);
      case 'claimed': {
        const claim: Claim = result.claim ?? { scope: g.scope, key: g.key, epoch: result.epoch };
        return runner.kind === 'plain'
          ? this.#runPlain(g, claim, runner.handler)
          : this.#runInTransaction(g, claim, runner.handler);
      }
    }
  }

  async #abandoned(g: Guarded, firstReport: boolean): Promise<Answer> {
    if (firstReport) await this.#reportAbandoned(g);
    return problems.outcomeUnknown(this.#o.keyHeader);
  }

  async #reportAbandoned(g: Guarded): Promise<void> {
    try {
      await this.#o.onAbandoned?.({
        key: g.key,
        route: g.route.source,
        caller: g.caller,
        method: g.incoming.method,
        target: g.incoming.target,
      });
    } catch {
      // A failing hook must not change the answer: the outcome is unknown either way.
    }
  }

  /** The handler run under its claim, its lease renewed while it runs (a slow handler is not a dead one). */
  async #runPlain<H extends HeaderSource>(
    g: Guarded,
    claim: Claim,
    handler: (incoming: Incoming) => Promise<Answer<H>>,
  ): Promise<Answer<H> | Answer> {
    const { store } = this.#o;
    const beat = this.#heartbeats.start(claim, g.route.leaseMs);
    try {
      let snapshot: Answer<H>;
      try {
        snapshot = await handler(g.incoming);
      } catch {
        // It may have done its work before throwing: never run it again blindly.
        // A store that fails here leaves the claim to its lease, which ends in the same place.
        if (g.route.rerun === 'safe') await store.release(claim).catch(() => undefined);
        else await store.abandon(claim).catch(() => undefined);
        return problems.handlerFailed(g.route.rerun === 'safe');
      }
      try {
        // Stored before the response leaves: a client that loses it gets it replayed.
        if (keeps(g.route.replay, snapshot.status))
          await store.complete(claim, storedOf(snapshot, this.#o.replayHeaders));
        else await store.release(claim);
      } catch {
        // The effect happened and the caller gets its answer; the claim, left without an
        // outcome, answers "outcome unknown" to a retry once its lease ends.
      }
      return snapshot;
    } finally {
      this.#heartbeats.stop(beat);
    }
  }

  /** The handler run in the store's transaction under its claim, its lease renewed while it runs. */
  async #runInTransaction<H extends HeaderSource>(
    g: Guarded,
    claim: Claim,
    handler: (tx: Tx, request: Request) => Promise<Answer<H>>,
  ): Promise<Answer<H> | Answer> {
    const { store } = this.#o;
    if (store.transaction === undefined) throw new TypeError('withIdempotency needs a store with transactions');
    const beat = this.#heartbeats.start(claim, g.route.leaseMs);
    try {
      return await store.transaction(claim, async (tx) => {
        const snapshot = await handler(tx, g.incoming.request());
        const kept = keeps(g.route.replay, snapshot.status);
        return { value: snapshot, store: kept ? storedOf(snapshot, this.#o.replayHeaders) : undefined };
      });
    } catch (error) {
      // Rolled back: the newer epoch's run will answer a retry.
      if (error instanceof LeaseTakenOverError) return problems.inProgress(this.#o.keyHeader, g.route.retryAfterMs);
      // Rolled back with the handler's own writes: nothing happened, so a retry may run it.
      await store.release(claim).catch(() => undefined);
      return problems.handlerFailed(true);
    } finally {
      this.#heartbeats.stop(beat);
    }
  }

  async #transactUnguarded<H extends HeaderSource>(
    request: Request,
    handler: (tx: Tx, request: Request) => Promise<Answer<H>>,
  ): Promise<Answer<H>> {
    const { store } = this.#o;
    if (store.transaction === undefined) throw new TypeError('withIdempotency needs a store with transactions');
    return store.transaction(undefined, async (tx) => ({ value: await handler(tx, request), store: undefined }));
  }
}

/** A Fetch request as the core reads it, the body read already when it has a key (else still unread). */
class FetchIncoming implements Incoming {
  readonly json: { value: unknown } | undefined;
  readonly ownCaller = false;
  #handed: Request | undefined = undefined;

  constructor(
    readonly original: Request,
    readonly url: string,
    readonly method: string,
    readonly target: string,
    readonly route: ResolvedRoute,
    readonly keyValue: string | null,
    readonly contentType: string | null,
    readonly body: Uint8Array,
  ) {
    this.json = parseJsonBody(body, contentType);
  }

  /** The body was read for the fingerprint; the handler gets the same bytes. */
  request(): Request {
    this.#handed ??= this.body.length === 0 ? this.original : handedOn(this.original, this.url, this.body, this.json);
    return this.#handed;
  }

  caller(): string {
    throw new TypeError('a Fetch request has no caller of its own: scopeOf names it');
  }
}

/**
 * What the handler gets of a request whose body was read: a view that
 * answers from the bytes (see request-view.ts), or where the runtime does
 * not take views, a request rebuilt with them.
 */
function handedOn(request: Request, url: string, bytes: Uint8Array, json: { value: unknown } | undefined): Request {
  return RequestView.supported()
    ? (new ReadRequestView(request, url, bytes, json) as unknown as Request)
    : rebuilt(request, bytes);
}

/** A request like `request`, with `bytes` as its body (its own was read for the fingerprint). */
function rebuilt(request: Request, bytes: Uint8Array): Request {
  // From the parts, not `new Request(request, …)`, which costs more. Without the client's
  // signal on purpose: a guarded handler runs to its end and its outcome is stored even when
  // the client has gone, since that client's retry will ask for it.
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: bytes as Uint8Array<ArrayBuffer>,
  });
}
