/**
 * The middleware's one path, for every framework: route → key → scope →
 * fingerprint → one atomic claim → run the handler, or answer from the
 * record (replay, 409 in progress, 409 outcome unknown, 422 key reused).
 * The outcome is stored before the response leaves, so a client that loses
 * the response gets it replayed; a handler that throws is not a response
 * and is never stored: its claim ends as "outcome unknown".
 */
import { selectEndpoint } from '../policy/endpoints.js';
import { fingerprintOf } from './fingerprint.js';
import { readKey } from './key.js';
import type { Resolved, ResolvedRoute } from './options.js';
import { problems } from './problems.js';
import { type Answer, keeps, replayOf, storedOf } from './replay.js';
import { type Claim, type ClaimResult, LeaseTakenOverError } from './store.js';

/** A request the middleware guards, everything known about it before the claim. */
interface Guarded {
  route: ResolvedRoute;
  key: string;
  caller: string;
  request: Request;
  scope: string;
  fingerprint: string;
  target: string;
}

/** The handler, answering read-to-the-end responses (the entry points adapt their own kind). */
export type Runner<Tx> =
  | { kind: 'plain'; handler: (request: Request) => Promise<Answer> }
  | { kind: 'transaction'; handler: (tx: Tx, request: Request) => Promise<Answer> };

const BODYLESS = new Set(['GET', 'HEAD']);

export class IdempotencyCore<Tx> {
  readonly #o: Resolved<Tx>;

  constructor(resolved: Resolved<Tx>) {
    this.#o = resolved;
  }

  /** The route guarding `method` and `pathname`, if any (the Node middleware skips reading other bodies). */
  routeOf(method: string, pathname: string): ResolvedRoute | undefined {
    const index = selectEndpoint(
      this.#o.routes.map((r) => r.pattern),
      method,
      pathname,
    );
    return this.#o.routes[index];
  }

  /**
   * `body`: the request's bytes when the caller has read them already (the
   * Node middleware); the handler then gets `request` as it is.
   */
  async handle(request: Request, runner: Runner<Tx>, body?: Uint8Array): Promise<Answer> {
    const method = request.method.toUpperCase();
    const url = new URL(request.url);
    const route = this.routeOf(method, url.pathname);
    if (route === undefined) return this.#runUnguarded(request, runner);
    const { keyHeader } = this.#o;
    const reading = readKey(request.headers.get(keyHeader), this.#o);
    if (reading.kind === 'missing') {
      return route.requireKey ? problems.keyMissing(keyHeader) : this.#runUnguarded(request, runner);
    }
    if (reading.kind === 'invalid') return problems.keyInvalid(keyHeader, reading.reason);
    const bytes = body ?? (BODYLESS.has(method) ? new Uint8Array(0) : new Uint8Array(await request.arrayBuffer()));
    const caller = await this.#o.scopeOf(request);
    const target = url.pathname + url.search;
    const guarded: Guarded = {
      route,
      key: reading.key,
      caller,
      target,
      // The body was read for the fingerprint; the handler gets the same bytes.
      request: body !== undefined || bytes.length === 0 ? request : rebuilt(request, bytes),
      scope: JSON.stringify([method, route.source, caller]),
      fingerprint: await fingerprintOf(method, target, bytes, request.headers.get('content-type')),
    };
    const claimed = await this.#o.store.claim({
      scope: guarded.scope,
      key: guarded.key,
      fingerprint: guarded.fingerprint,
      leaseMs: route.leaseMs,
      retentionMs: route.retentionMs,
      rerunAbandoned: route.rerun === 'safe',
      atomic: runner.kind === 'transaction',
    });
    return this.#answer(guarded, claimed, runner);
  }

  async #answer(g: Guarded, result: ClaimResult, runner: Runner<Tx>): Promise<Answer> {
    const { keyHeader } = this.#o;
    switch (result.kind) {
      case 'mismatch':
        return problems.keyReused(keyHeader);
      case 'in_progress':
        return problems.inProgress(keyHeader, g.route.retryAfterMs);
      case 'completed':
        return replayOf(result.response);
      case 'abandoned':
        if (result.firstReport) await this.#reportAbandoned(g);
        return problems.outcomeUnknown(keyHeader);
      case 'claimed': {
        const claim: Claim = { scope: g.scope, key: g.key, epoch: result.epoch };
        return runner.kind === 'plain'
          ? this.#runPlain(g, claim, runner.handler)
          : this.#runInTransaction(g, claim, runner.handler);
      }
    }
  }

  async #reportAbandoned(g: Guarded): Promise<void> {
    try {
      await this.#o.onAbandoned?.({
        key: g.key,
        route: g.route.source,
        caller: g.caller,
        method: g.request.method,
        target: g.target,
      });
    } catch {
      // A failing hook must not change the answer: the outcome is unknown either way.
    }
  }

  async #runPlain(g: Guarded, claim: Claim, handler: (request: Request) => Promise<Answer>): Promise<Answer> {
    const { store } = this.#o;
    let snapshot: Answer;
    try {
      snapshot = await handler(g.request);
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
  }

  async #runInTransaction(
    g: Guarded,
    claim: Claim,
    handler: (tx: Tx, request: Request) => Promise<Answer>,
  ): Promise<Answer> {
    const { store } = this.#o;
    if (store.transaction === undefined) throw new TypeError('withIdempotency needs a store with transactions');
    try {
      return await store.transaction(claim, async (tx) => {
        const snapshot = await handler(tx, g.request);
        const kept = keeps(g.route.replay, snapshot.status);
        return { value: snapshot, store: kept ? storedOf(snapshot, this.#o.replayHeaders) : undefined };
      });
    } catch (error) {
      // Rolled back: the newer epoch's run will answer a retry.
      if (error instanceof LeaseTakenOverError) return problems.inProgress(this.#o.keyHeader, g.route.retryAfterMs);
      // Rolled back with the handler's own writes: nothing happened, so a retry may run it.
      await store.release(claim).catch(() => undefined);
      return problems.handlerFailed(true);
    }
  }

  async #runUnguarded(request: Request, runner: Runner<Tx>): Promise<Answer> {
    if (runner.kind === 'plain') return runner.handler(request);
    const { store } = this.#o;
    if (store.transaction === undefined) throw new TypeError('withIdempotency needs a store with transactions');
    return store.transaction(undefined, async (tx) => ({ value: await runner.handler(tx, request), store: undefined }));
  }
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
