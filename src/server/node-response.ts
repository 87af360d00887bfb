/**
 * The Node middleware's side of `res`: the application's response captured
 * whole (nothing reaches the socket before the outcome is stored), and the
 * guard's answer written out afterwards.
 *
 * While the application runs, `res.writeHead`, `write` and `end` are
 * replaced: status and headers stay on `res` itself, the bytes are
 * collected, and `end` hands the core a read-to-the-end answer whose
 * headers are read from `res` (no copy made). Typed structurally, so no
 * Node types are needed: anything shaped like `ServerResponse` works.
 */
import { copyOf, utf8Bytes } from './bytes.js';
import type { Answer, HeaderSource } from './replay.js';

export type HeaderValue = string | number | readonly string[] | undefined;

export interface NodeResponseLike {
  statusCode: number;
  setHeader(name: string, value: HeaderValue): unknown;
  getHeader(name: string): HeaderValue;
  getHeaders(): Record<string, HeaderValue>;
  writeHead(status: number, ...rest: unknown[]): unknown;
  write(chunk: unknown, ...rest: unknown[]): boolean;
  end(...args: unknown[]): unknown;
}

/**
 * Runs `next` (the application) with `res` captured: `writeHead` sets
 * status and headers, `write` and `end` collect bytes, and `end` resolves
 * the whole response. A synchronous throw is a failed handler.
 */
export function captureResponse(res: NodeResponseLike, next: () => void): Promise<Answer<HeaderSource>> {
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

/** Whether `answer` is the application's own, captured by `captureResponse` (its headers are on `res`). */
export function isCaptured(answer: Answer<HeaderSource>): boolean {
  return answer instanceof ResponseCapture;
}

/**
 * Writes the core's answer to `res`. `captured`: the answer is the
 * application's own, whose headers are still on `res`, so only status and
 * body are left to write.
 */
export function sendAnswer(res: NodeResponseLike, answer: Answer<HeaderSource>, captured: boolean): void {
  res.statusCode = answer.status;
  if (!captured) copyHeaders(res, answer as Answer);
  res.setHeader('content-length', String(answer.body.length));
  const callback = captured ? (answer as ResponseCapture).endCallback : undefined;
  if (callback === undefined) res.end(answer.body);
  else res.end(answer.body, callback);
}

/** The guard's own answer's headers (a replay's, a problem's) onto `res`, `Set-Cookie` kept as a list. */
function copyHeaders(res: NodeResponseLike, answer: Answer): void {
  const cookies = answer.headers.getSetCookie();
  answer.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
}

/** The chunks as one array (a single chunk as it is: a read chunk is the reader's, and a written one is copied by `toBytes`). */
export function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const EMPTY = new Uint8Array(0);

/** A written chunk as bytes of its own (an application may reuse a buffer after `write`). */
function toBytes(chunk: unknown, encoding: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return copyOf(chunk);
  if (typeof chunk === 'string') {
    if (encoding !== undefined && encoding !== 'utf8' && encoding !== 'utf-8') {
      throw new TypeError(
        `res.write with encoding ${String(encoding)} is not supported under the idempotency middleware`,
      );
    }
    return utf8Bytes(chunk);
  }
  throw new TypeError('res.write accepts strings and bytes');
}

type Methods = Pick<NodeResponseLike, 'writeHead' | 'write' | 'end'>;

/** Where a captured `res` holds its capture (a symbol: no field of `res` or of a framework's). */
const CAPTURE = Symbol('oncely.capture');

type Captured = NodeResponseLike & { [CAPTURE]?: ResponseCapture | undefined };

/**
 * `res` with its `writeHead`, `write` and `end` replaced until `end`; then
 * the answer itself (status and body collected, headers read from `res`
 * with no copy made): one object a request, not one for the capture, one
 * for `res`'s methods, one for the answer and one for its headers.
 *
 * Classes, not object literals, on purpose, here and for the answer: the
 * engine may decide to allocate a literal's objects straight into the old
 * generation once many of them outlive a minor collection, and an old
 * object that points at `res` keeps the whole request (socket state,
 * headers, buffers) alive through every minor collection until the next
 * full one. Profiles of a loaded server showed exactly that: several
 * kilobytes per request promoted, most of the guard's cost.
 *
 * For the same reason the methods put on `res` are the same three
 * functions for every request, which find the capture on `res` itself
 * (`this[CAPTURE]`), not three closures made per request: with closures,
 * about 2 KB of every request outlived a minor collection and was copied
 * into the old generation (measured with the engine's GC trace on a loaded
 * server: 2.1 KB promoted per request with closures, under 0.1 KB without).
 * Like Node's own methods, they need `res` as `this` (`res.end(…)`, or
 * `end.call(res, …)` as wrapping middleware calls the one it replaced).
 */
class ResponseCapture implements Answer<HeaderSource>, HeaderSource {
  readonly #res: NodeResponseLike;
  readonly #resolve: (answer: Answer<HeaderSource>) => void;
  readonly #reject: (error: unknown) => void;
  /** `res`'s methods before the capture (its prototype's, usually). */
  readonly #writeHeadBefore: Methods['writeHead'];
  readonly #writeBefore: Methods['write'];
  readonly #endBefore: Methods['end'];
  #first: Uint8Array | undefined = undefined;
  #more: Uint8Array[] | undefined = undefined;
  /** The answer, once `end` was called. */
  status = 0;
  body: Uint8Array = EMPTY;
  /** `end`'s callback, handed to the real `end` when the answer is written out. */
  endCallback: (() => void) | undefined = undefined;

  constructor(
    res: NodeResponseLike,
    resolve: (answer: Answer<HeaderSource>) => void,
    reject: (error: unknown) => void,
  ) {
    this.#res = res;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#writeHeadBefore = res.writeHead;
    this.#writeBefore = res.write;
    this.#endBefore = res.end;
    (res as Captured)[CAPTURE] = this;
    res.writeHead = ResponseCapture.#capturedWriteHead;
    res.write = ResponseCapture.#capturedWrite;
    res.end = ResponseCapture.#capturedEnd;
  }

  /** The capture of `res`, the `this` of a captured method. */
  static #of(res: Captured | undefined): ResponseCapture {
    const capture = res?.[CAPTURE];
    if (capture === undefined)
      throw new TypeError('a captured res.writeHead, write or end was called without res as this');
    return capture;
  }

  static readonly #capturedWriteHead = function (this: Captured, status: number, ...rest: unknown[]) {
    return ResponseCapture.#of(this).#writeHead(status, rest);
  };

  static readonly #capturedWrite = function (this: Captured, chunk: unknown, ...rest: unknown[]) {
    return ResponseCapture.#of(this).#write(chunk, rest);
  };

  static readonly #capturedEnd = function (this: Captured, ...args: unknown[]) {
    return ResponseCapture.#of(this).#end(args);
  };

  /**
   * Gives `res` its methods back, as own properties: deleting them would
   * turn `res` into a slow dictionary object whenever anything (`statusCode`,
   * a framework's field) was added to it after them.
   */
  restore(): void {
    const res = this.#res;
    res.writeHead = this.#writeHeadBefore;
    res.write = this.#writeBefore;
    res.end = this.#endBefore;
    (res as Captured)[CAPTURE] = undefined;
  }

  /** The answer's headers are `res`'s (this object reads them). */
  get headers(): HeaderSource {
    return this;
  }

  /** One of `res`'s headers as storing reads it (several values joined, as `Headers.get` joins them). */
  get(name: string): string | null {
    const value = this.#res.getHeader(name);
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : String(value);
  }

  /** `res`'s headers, all of them (lower-case names, several values joined). */
  forEach(callback: (value: string, name: string) => void): void {
    const headers = this.#res.getHeaders();
    for (const name in headers) {
      const value = headers[name];
      if (value !== undefined) callback(Array.isArray(value) ? value.join(', ') : String(value), name);
    }
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
      // `end(chunk, encoding, callback)`, each part optional: `end(chunk, callback)` and `end(callback)` too.
      const [chunk, encoding] = args;
      if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
        this.#push(toBytes(chunk, typeof encoding === 'string' ? encoding : undefined));
      }
      this.endCallback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
      this.body = this.#more === undefined ? (this.#first ?? EMPTY) : concat(this.#more);
      this.status = res.statusCode;
      this.#resolve(this);
    } catch (error) {
      this.#reject(error);
    }
    return res;
  }
}
