/**
 * A Fetch `Request` that costs only what is read of it.
 *
 * Node's `Request` (undici) is dear to build on a server's hot path: an
 * `AbortSignal`, a `Headers` copy, a parsed URL, and a `ReadableStream`
 * for a body, all garbage a moment later. Most readers of a guarded request
 * want its method, URL, headers or body and nothing else: `scopeOf` reads a
 * header, a handler reads `json()`. A view answers those from what the
 * entry point already holds (Node's `req.headers`, the body bytes the
 * fingerprint read) and builds the real `Request` only when anything else
 * is asked for (`signal`, `clone()`, `body`, `formData()`…), then hands that
 * member over to it.
 *
 * It is honestly a `Request`: its prototype chain runs through
 * `Request.prototype`, so `instanceof Request` holds, and the runtime's
 * internal state of a `Request`, where the runtime keeps it in symbol-keyed
 * properties (Node's undici), is read from the real one too, so
 * `new Request(view)` and `fetch(view)` work. Where a runtime keeps that
 * state out of reach (private fields, native objects), a self-test on first
 * use fails and the entry points build real `Request`s as before.
 */

import { BODY_USED, delegateTo, REAL, type View } from './view.js';

const utf8 = new TextDecoder();

/** `Request.prototype` members a view answers itself; every other one goes to the real `Request`. */
const OWN = new Set<PropertyKey>(['method', 'url', 'headers', 'bodyUsed', 'text', 'json', 'arrayBuffer', 'bytes']);

export abstract class RequestView implements View<Request> {
  #real: Request | undefined = undefined;
  #used = false;
  /** The body as read already (`undefined`: the view has none, and its body members are the real one's). */
  readonly #bytes: Uint8Array | undefined;
  /** Its JSON, when the fingerprint parsed it already: the first `json()` hands it over. */
  #parsed: { value: unknown } | undefined;

  constructor(bytes: Uint8Array | undefined, parsed: { value: unknown } | undefined) {
    this.#bytes = bytes;
    this.#parsed = parsed;
  }

  abstract get method(): string;
  abstract get url(): string;
  abstract get headers(): Headers;

  get bodyUsed(): boolean {
    return this.#real === undefined ? this.#used : this.#real.bodyUsed;
  }

  async text(): Promise<string> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().text() : utf8.decode(bytes);
  }

  async json(): Promise<unknown> {
    const bytes = this.#take();
    if (bytes === undefined) return this[REAL]().json();
    const parsed = this.#parsed;
    this.#parsed = undefined;
    return parsed === undefined ? JSON.parse(utf8.decode(bytes)) : parsed.value;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().arrayBuffer() : (bytes.slice().buffer as ArrayBuffer);
  }

  async bytes(): Promise<Uint8Array> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().bytes() : bytes.slice();
  }

  /** The body bytes, once, as a `Request` gives its body once; `undefined` when the real one answers. */
  #take(): Uint8Array | undefined {
    if (this.#real !== undefined || this.#bytes === undefined) return undefined;
    if (this.#used) throw new TypeError(BODY_USED);
    this.#used = true;
    return this.#bytes;
  }

  /** The real `Request`, built on first need from the view's parts. */
  [REAL](): Request {
    if (this.#real !== undefined) return this.#real;
    const bytes = this.#bytes;
    const real = new Request(this.url, {
      method: this.method,
      headers: this.headers,
      ...(bytes === undefined ? {} : { body: bytes as Uint8Array<ArrayBuffer> }),
    });
    // Read through the view already: the real one's body is spent too (reading it marks it so at once).
    if (this.#used) real.arrayBuffer().catch(() => undefined);
    this.#real = real;
    return real;
  }

  static #works: boolean | undefined;

  /** Whether views work in this runtime (checked once): when not, build real `Request`s. */
  static supported(): boolean {
    RequestView.#works ??= RequestView.#install();
    return RequestView.#works;
  }

  static #install(): boolean {
    if (typeof Request !== 'function') return false;
    try {
      delegateTo(RequestView.prototype, Request, OWN, new Request('http://localhost/'));
      // A view read the ways an application may: as itself, and through the runtime's `Request` constructor.
      const view = new FixedView() as unknown as Request;
      const copy = new Request(view);
      return (
        view instanceof Request &&
        copy.method === 'POST' &&
        copy.url === 'http://localhost/probe' &&
        copy.headers.get('x-probe') === '1' &&
        view.signal instanceof AbortSignal
      );
    } catch {
      return false;
    }
  }
}

/** The self-test's view. */
class FixedView extends RequestView {
  constructor() {
    super(new Uint8Array([49]), undefined);
  }

  get headers(): Headers {
    return new Headers({ 'x-probe': '1' });
  }

  get method(): string {
    return 'POST';
  }

  get url(): string {
    return 'http://localhost/probe';
  }
}

/**
 * A Fetch request whose body was read already (for the fingerprint), as the
 * handler gets it: that body from the bytes (and the first `json()` from the
 * parse the fingerprint made), the rest from the request itself. Its real
 * `Request`, when one is needed, carries no client signal, as a rebuilt one
 * never did: a guarded handler runs to its end and its outcome is stored even
 * when the client has gone, since that client's retry will ask for it.
 */
export class ReadRequestView extends RequestView {
  readonly #original: Request;
  readonly #url: string;

  constructor(original: Request, url: string, bytes: Uint8Array, parsed: { value: unknown } | undefined) {
    super(bytes, parsed);
    this.#original = original;
    this.#url = url;
  }

  get method(): string {
    return this.#original.method;
  }

  get url(): string {
    return this.#url;
  }

  get headers(): Headers {
    return this.#original.headers;
  }
}
