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
 * member over to it (view.ts).
 *
 * Where a runtime keeps a `Request`'s state out of reach (private fields,
 * native objects), the self-test on first use fails and the entry points
 * build real `Request`s as before.
 */

import { BODY_MEMBERS, BodyView, delegateTo, selfTest } from './view.js';

/** `Request.prototype` members a view answers itself; every other one goes to the real `Request`. */
const OWN = new Set<PropertyKey>(['method', 'url', 'headers', ...BODY_MEMBERS]);

export abstract class RequestView extends BodyView<Request> {
  abstract get method(): string;
  abstract get url(): string;
  abstract get headers(): Headers;

  protected build(bytes: Uint8Array | undefined): Request {
    return new Request(this.url, {
      method: this.method,
      headers: this.headers,
      ...(bytes === undefined ? {} : { body: bytes as Uint8Array<ArrayBuffer> }),
    });
  }

  /** Whether views work in this runtime (checked once): when not, build real `Request`s. */
  static readonly supported = selfTest(() => {
    if (typeof Request !== 'function') return false;
    delegateTo(RequestView.prototype, Request, OWN, new Request('http://localhost/'), BodyView.prototype);
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
  });
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
