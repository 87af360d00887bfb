/**
 * The Connect-style middleware `(req, res, next)` for Node `http`, Express
 * and Connect, on the same core as the Fetch handler: a guarded request is
 * read once, `next()` runs the application with the response captured
 * (node-response.ts: nothing reaches the socket before the outcome is
 * stored), and the core's answer is written out.
 *
 * It is on the path of every guarded request, so it reads `req` as it is:
 * the key and the content type from `req.headers`, the body parsed once
 * (for the fingerprint and for `req.body`). `scopeOf` gets a view of `req`
 * as a Fetch `Request` (node-request-view.ts), which builds a real one only
 * if it is asked for more than its method, URL and headers; with
 * `nodeScopeOf`, none at all. What a request carries through the core is
 * one object (`NodeIncoming`), not closures over `req` and `res`.
 *
 * Typed structurally, so this module needs neither Node's types nor
 * Express's: anything shaped like `IncomingMessage`/`ServerResponse` works.
 */
import type { IdempotencyCore, Incoming, Runner } from './core.js';
import { parseJsonBody } from './fingerprint.js';
import { fetchRequestOf, joined } from './node-request-view.js';
import { captureResponse, concat, isCaptured, type NodeResponseLike, sendAnswer } from './node-response.js';
import type { ResolvedRoute } from './options.js';
import type { Answer, HeaderSource } from './replay.js';
import { targetParts } from './target.js';

export type { NodeResponseLike } from './node-response.js';

export interface NodeRequestLike {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  body?: unknown;
  rawBody?: Uint8Array;
}

export type ConnectMiddleware = (req: NodeRequestLike, res: NodeResponseLike, next: (error?: unknown) => void) => void;

type Next = (error?: unknown) => void;
type NodeScopeOf = (req: NodeRequestLike) => string | Promise<string>;

export function connectMiddleware<Tx>(core: IdempotencyCore<Tx>): ConnectMiddleware {
  const keyName = core.keyHeader.toLowerCase();
  const { nodeScopeOf } = core;
  if (nodeScopeOf === undefined) core.requireScopeOf('the middleware');
  /** One runner for every request: the request it runs is the `NodeIncoming` the core hands back. */
  const runner: Runner<Tx, HeaderSource> = { kind: 'plain', handler: (incoming) => (incoming as NodeIncoming).run() };
  /** A request on a guarded route, its body read: through the core, and the answer written out. */
  const guard = async (incoming: NodeIncoming): Promise<void> => {
    try {
      const answer = await core.guard(incoming, runner);
      // The application's own answer still has its headers on `res`: only status and body to write.
      sendAnswer(incoming.res, answer, isCaptured(answer));
    } catch (error) {
      incoming.next(error);
    }
  };
  return (req, res, next) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const { pathname, search } = targetParts(req.url ?? '/');
    const route = core.routeOf(method, pathname);
    if (route === undefined) {
      next();
      return;
    }
    const incoming = new NodeIncoming(req, res, next, method, pathname + search, route, keyName, nodeScopeOf);
    const parsed = parsedBefore(req);
    if (parsed !== undefined) {
      incoming.read(parsed);
      void guard(incoming);
      return;
    }
    readBody(req).then((body) => {
      incoming.read(body);
      return guard(incoming);
    }, next);
  };
}

const EMPTY = new Uint8Array(0);

/**
 * A guarded Node request as the core sees it, and what runs it: a class,
 * not a literal holding closures over `req` and `res` (see node-response.ts
 * on why objects that point at `res` are made by classes).
 */
class NodeIncoming implements Incoming {
  readonly keyValue: string | null;
  readonly contentType: string | null;
  body: Uint8Array = EMPTY;
  json: { value: unknown } | undefined = undefined;
  #request: Request | undefined = undefined;

  constructor(
    readonly req: NodeRequestLike,
    readonly res: NodeResponseLike,
    readonly next: Next,
    readonly method: string,
    readonly target: string,
    readonly route: ResolvedRoute,
    keyName: string,
    readonly nodeScopeOf: NodeScopeOf | undefined,
  ) {
    this.keyValue = joined(req.headers[keyName]) ?? null;
    this.contentType = joined(req.headers['content-type']) ?? null;
  }

  /** The body, read: parsed here once, for the fingerprint and as `req.body` for the application. */
  read(body: Uint8Array): void {
    this.body = body;
    if ((this.req as { _body?: boolean })._body !== true) this.json = parseJsonBody(body, this.contentType);
  }

  get ownCaller(): boolean {
    return this.nodeScopeOf !== undefined;
  }

  caller(): string | Promise<string> {
    return (this.nodeScopeOf as NodeScopeOf)(this.req);
  }

  request(): Request {
    this.#request ??= fetchRequestOf(this.req, this.method, this.target);
    return this.#request;
  }

  /** The application, run with the body handed on and the response captured. */
  run(): Promise<Answer<HeaderSource>> {
    handBody(this.req, this.body, this.json);
    return captureResponse(this.res, this.next);
  }
}

/**
 * The body, when a parser ran before this middleware (`express.json()` ahead
 * of it): the stream is spent, so the fingerprint is taken from what the
 * parser left — its raw bytes when it kept them, else the parsed value as
 * JSON (compared by meaning for JSON bodies, as always).
 */
function parsedBefore(req: NodeRequestLike): Uint8Array | undefined {
  if (req.rawBody instanceof Uint8Array) return req.rawBody;
  const spent =
    (req as { _body?: boolean })._body === true || (req as { readableEnded?: boolean }).readableEnded === true;
  if (!spent) return undefined;
  if (req.body === undefined) return new Uint8Array(0);
  if (req.body instanceof Uint8Array) return req.body;
  return new TextEncoder().encode(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
}

function readBody(req: NodeRequestLike): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    req.on('data', (chunk) => chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk));
    req.on('end', () => resolve(concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * The body the middleware read, left for the application as a body parser
 * leaves it (`req.body`, `req.rawBody`), unless a parser ran before it.
 */
function handBody(req: NodeRequestLike, bytes: Uint8Array, json: { value: unknown } | undefined): void {
  if ((req as { _body?: boolean })._body) return;
  req.rawBody = bytes;
  req.body = json === undefined ? bytes : json.value;
  // body-parser's own flag: a parser further down leaves the body it finds alone.
  (req as { _body?: boolean })._body = true;
}
