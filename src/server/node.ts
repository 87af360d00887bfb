/**
 * The Connect-style middleware `(req, res, next)` for Node `http`, Express
 * and Connect, on the same core as the Fetch handler: a guarded request is
 * read once, `next()` runs the application with the response captured
 * (nothing reaches the socket before the outcome is stored), and the core's
 * answer is written out.
 *
 * It is on the path of every guarded request, so it reads `req` as it is:
 * the key and the content type from `req.headers`, the body parsed once
 * (for the fingerprint and for `req.body`), the captured response stored
 * from `res`'s own headers. `scopeOf` gets a view of `req` as a Fetch
 * `Request` (request-view.ts), which builds a real one only if it is asked
 * for more than its method, URL and headers.
 *
 * Typed structurally, so this module needs neither Node's types nor
 * Express's: anything shaped like `IncomingMessage`/`ServerResponse` works.
 */
import type { IdempotencyCore, Incoming } from './core.js';
import { parseJsonBody } from './fingerprint.js';
import type { Answer, HeaderSource } from './replay.js';
import { RequestView } from './request-view.js';

type HeaderValue = string | number | readonly string[] | undefined;

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

export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: HeaderValue): unknown;
  getHeaders(): Record<string, HeaderValue>;
  writeHead(status: number, ...rest: unknown[]): unknown;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  end(...args: unknown[]): unknown;
}

export type ConnectMiddleware = (req: NodeRequestLike, res: NodeResponseLike, next: (error?: unknown) => void) => void;

export function connectMiddleware<Tx>(core: IdempotencyCore<Tx>): ConnectMiddleware {
  const keyName = core.keyHeader.toLowerCase();
  const { nodeScopeOf } = core;
  if (nodeScopeOf === undefined) core.requireScopeOf('the middleware');
  return (req, res, next) => {
    const method = (req.method ?? 'GET').toUpperCase();
    const { pathname, search } = pathOf(req.url ?? '/');
    const route = core.routeOf(method, pathname);
    if (route === undefined) {
      next();
      return;
    }
    const parsed = parsedBefore(req);
    (parsed === undefined ? readBody(req) : Promise.resolve(parsed))
      .then(async (body) => {
        const contentType = joined(req.headers['content-type']) ?? null;
        // Parsed here once: for the fingerprint, and as `req.body` for the application.
        const json = (req as { _body?: boolean })._body === true ? undefined : parseJsonBody(body, contentType);
        let request: Request | undefined;
        const incoming: Incoming = {
          method,
          target: pathname + search,
          route,
          keyValue: joined(req.headers[keyName]) ?? null,
          contentType,
          body,
          json,
          request: () => {
            request ??= fetchRequestOf(req, method, pathname + search);
            return request;
          },
          caller: nodeScopeOf === undefined ? undefined : () => nodeScopeOf(req),
        };
        let downstream: Answer<HeaderSource> | undefined;
        const handler = async () => {
          downstream = await runDownstream(req, res, next, body, json);
          return downstream;
        };
        const answer = await core.guard(incoming, { kind: 'plain', handler });
        // The application's own answer still has its headers on `res`: only status and body to write.
        if (answer === downstream) writeBody(res, answer);
        else writeAnswer(res, answer as Answer);
      })
      .catch((error: unknown) => next(error));
  };
}

/**
 * A path the URL parser would give back unchanged: no dot segment, no
 * percent sign, no backslash, no second leading slash, nothing it would
 * encode; its query plain too. The common case, read without a parser.
 */
const PLAIN_TARGET = /^\/(?!\/)[\w\-~!$&'()*+,;=:@/]*(\?[\w\-.~!$&()*+,;=:@/?%]+)?$/;

/** Path and query as `new URL` would give them (the Fetch entry point's, so both styles fingerprint alike). */
function pathOf(target: string): { pathname: string; search: string } {
  if (PLAIN_TARGET.test(target)) {
    const question = target.indexOf('?');
    return question < 0
      ? { pathname: target, search: '' }
      : { pathname: target.slice(0, question), search: target.slice(question) };
  }
  const url = new URL(target, 'http://localhost');
  return { pathname: url.pathname, search: url.search };
}

/** A header as `Headers.get` gives it: several lines joined with `, `. */
function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * `req` as a Fetch `Request` (for `scopeOf`), with no body on it: the core
 * has the bytes, and downstream reads `req`. A view where the runtime takes
 * one: `scopeOf` mostly reads a header, and a real `Request` costs far more
 * than the guard itself.
 */
function fetchRequestOf(req: NodeRequestLike, method: string, target: string): Request {
  if (RequestView.supported()) return new NodeRequestView(req, method, target) as unknown as Request;
  return new Request(urlOf(req, target), { method, headers: headersOf(req.headers) });
}

/** The request's URL as the Fetch entry point sees it: its `Host` and the target. */
function urlOf(req: NodeRequestLike, target: string): string {
  return new URL(target, `http://${joined(req.headers.host) ?? 'localhost'}`).href;
}

/** `req.headers` as `Headers` (a header sent on several lines keeps each value). */
function headersOf(headers: NodeRequestLike['headers']): Headers {
  const out = new Headers();
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const one of value) out.append(name, one);
    else if (value !== undefined) out.append(name, value);
  }
  return out;
}

/** `req` seen as a `Request`: its URL and headers are read from `req` on first access, each once. */
class NodeRequestView extends RequestView {
  readonly #req: NodeRequestLike;
  readonly #method: string;
  readonly #target: string;
  #url: string | undefined = undefined;
  #headers: Headers | undefined = undefined;

  constructor(req: NodeRequestLike, method: string, target: string) {
    super(undefined, undefined);
    this.#req = req;
    this.#method = method;
    this.#target = target;
  }

  get method(): string {
    return this.#method;
  }

  get url(): string {
    this.#url ??= urlOf(this.#req, this.#target);
    return this.#url;
  }

  get headers(): Headers {
    this.#headers ??= headersOf(this.#req.headers);
    return this.#headers;
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

/** The chunks as one array (a single chunk as it is: a read chunk is the reader's, and a written one is copied by `toBytes`). */
function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const encoder = new TextEncoder();

/** A written chunk as bytes of its own (an application may reuse a buffer after `write`). */
function toBytes(chunk: unknown, encoding: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk.slice();
  if (typeof chunk === 'string') {
    if (encoding !== undefined && encoding !== 'utf8' && encoding !== 'utf-8') {
      throw new TypeError(
        `res.write with encoding ${String(encoding)} is not supported under the idempotency middleware`,
      );
    }
    return encoder.encode(chunk);
  }
  throw new TypeError('res.write accepts strings and bytes');
}

/**
 * Runs the application with `res` captured: `writeHead` sets status and
 * headers, `write` and `end` collect bytes, and `end` resolves the whole
 * response. A synchronous throw is a failed handler.
 */
function runDownstream(
  req: NodeRequestLike,
  res: NodeResponseLike,
  next: (error?: unknown) => void,
  bytes: Uint8Array,
  json: { value: unknown } | undefined,
): Promise<Answer<HeaderSource>> {
  if (!(req as { _body?: boolean })._body) {
    req.rawBody = bytes;
    req.body = json === undefined ? bytes : json.value;
    // body-parser's own flag: a parser further down leaves the body it finds alone.
    (req as { _body?: boolean })._body = true;
  }
  return new Promise<Answer<HeaderSource>>((resolve, reject) => {
    const capture = new ResponseCapture(res, resolve, reject);
    try {
      // Errors further down go to the framework's error handler, whose answer is captured like any other.
      next();
    } catch (error) {
      capture.restore();
      reject(error);
    }
  });
}

type Methods = Pick<NodeResponseLike, 'writeHead' | 'write' | 'end'>;

/**
 * `res` with its `writeHead`, `write` and `end` replaced until `end`.
 *
 * Classes, not object literals, on purpose, here and for the answer: the
 * engine may decide to allocate a literal's objects straight into the old
 * generation once many of them outlive a minor collection, and an old
 * object that points at `res` keeps the whole request (socket state,
 * headers, buffers) alive through every minor collection until the next
 * full one. Profiles of a loaded server showed exactly that: several
 * kilobytes per request promoted, most of the guard's cost.
 */
class ResponseCapture {
  readonly #res: NodeResponseLike;
  readonly #resolve: (answer: Answer<HeaderSource>) => void;
  readonly #reject: (error: unknown) => void;
  /** `res`'s methods before the capture (its prototype's, usually). */
  readonly #original: OriginalMethods;
  #first: Uint8Array | undefined = undefined;
  #more: Uint8Array[] | undefined = undefined;

  constructor(
    res: NodeResponseLike,
    resolve: (answer: Answer<HeaderSource>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#res = res;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#original = new OriginalMethods(res.writeHead, res.write, res.end);
    res.writeHead = (status: number, ...rest: unknown[]) => this.#writeHead(status, rest);
    res.write = (chunk: unknown, ...rest: unknown[]) => this.#write(chunk, rest);
    res.end = (...args: unknown[]) => this.#end(args);
  }

  /**
   * Gives `res` its methods back, as own properties: deleting them would
   * turn `res` into a slow dictionary object whenever anything (`statusCode`,
   * a framework's field) was added to it after them.
   */
  restore(): void {
    const res = this.#res;
    const original = this.#original;
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
  }

  #push(bytes: Uint8Array): void {
    if (this.#first === undefined) {
      this.#first = bytes;
      return;
    }
    this.#more ??= [this.#first];
    this.#more.push(bytes);
  }

  #writeHead(status: number, rest: unknown[]): NodeResponseLike {
    const res = this.#res;
    res.statusCode = status;
    const headers = rest.find((r) => typeof r === 'object' && r !== null);
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1] as HeaderValue);
    } else if (headers !== undefined) {
      for (const name in headers) {
        if (Object.hasOwn(headers, name)) res.setHeader(name, (headers as Record<string, HeaderValue>)[name]);
      }
    }
    return res;
  }

  #write(chunk: unknown, rest: unknown[]): boolean {
    this.#push(toBytes(chunk, typeof rest[0] === 'string' ? rest[0] : undefined));
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }

  #end(args: unknown[]): NodeResponseLike {
    const res = this.#res;
    this.restore();
    try {
      const [chunk, encoding] = args;
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') this.#push(toBytes(chunk, encoding));
      const body = this.#more === undefined ? (this.#first ?? EMPTY) : concat(this.#more);
      this.#resolve(new CapturedAnswer(res.statusCode, new ResponseHeaders(res), body));
    } catch (error) {
      this.#reject(error);
    }
    return res;
  }
}

class OriginalMethods implements Methods {
  constructor(
    readonly writeHead: Methods['writeHead'],
    readonly write: Methods['write'],
    readonly end: Methods['end'],
  ) {}
}

const EMPTY = new Uint8Array(0);

class CapturedAnswer implements Answer<HeaderSource> {
  constructor(
    readonly status: number,
    readonly headers: HeaderSource,
    readonly body: Uint8Array,
  ) {}
}

/** `res`'s headers as storing reads them (lower-case names, several values joined), with no copy made. */
class ResponseHeaders implements HeaderSource {
  readonly #res: NodeResponseLike;

  constructor(res: NodeResponseLike) {
    this.#res = res;
  }

  forEach(callback: (value: string, name: string) => void): void {
    const headers = this.#res.getHeaders();
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined) callback(Array.isArray(value) ? value.join(', ') : String(value), name);
    }
  }
}

function writeBody(res: NodeResponseLike, answer: Answer<HeaderSource>): void {
  res.statusCode = answer.status;
  res.setHeader('content-length', String(answer.body.length));
  res.end(answer.body);
}

function writeAnswer(res: NodeResponseLike, answer: Answer): void {
  res.statusCode = answer.status;
  const cookies = answer.headers.getSetCookie();
  answer.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  res.setHeader('content-length', String(answer.body.length));
  res.end(answer.body);
}
