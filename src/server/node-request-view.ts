/**
 * Node's `req` as a Fetch `Request`, for `scopeOf` in the Node middleware:
 * a view (request-view.ts) whose method, URL and headers are read from
 * `req` on first access, and with no body (the core has the bytes, and the
 * application reads `req`).
 *
 * `scopeOf` mostly reads one header. A `Headers` built from `req.headers`
 * (one validated `append` per header line) cost as much as the rest of
 * the view, so its headers are a view too: `get` and `has` read
 * `req.headers` (lower-case names, as Node's parser keeps them; several
 * lines joined with `, `, as `Headers` joins them), and any other member
 * (`set`, iteration, `new Headers(view)`) builds the real `Headers` from
 * `req.headers` and answers from it, `get` and `has` too from then on.
 */
import type { NodeRequestLike } from './node.js';
import { RequestView } from './request-view.js';
import { delegateTo, REAL, selfTest, type View } from './view.js';

/** A header as `Headers.get` gives it: several lines joined with `, `. */
export function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * `req` as a Fetch `Request`, with no body on it. A view where the runtime
 * takes one: a real `Request` costs far more than the guard itself.
 */
export function fetchRequestOf(req: NodeRequestLike, method: string, target: string): Request {
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
    this.#headers ??= NodeHeaders.supported()
      ? (new NodeHeaders(this.#req.headers) as unknown as Headers)
      : headersOf(this.#req.headers);
    return this.#headers;
  }
}

/** A header name `Headers.get` accepts (an RFC 9110 token); any other is the real one's to refuse. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** `Headers.prototype` members the view answers itself. */
const OWN = new Set<PropertyKey>(['get', 'has']);

/** `req.headers` seen as `Headers`. */
class NodeHeaders implements View<Headers> {
  readonly #headers: NodeRequestLike['headers'];
  #real: Headers | undefined = undefined;

  constructor(headers: NodeRequestLike['headers']) {
    this.#headers = headers;
  }

  get(name: string): string | null {
    if (this.#real !== undefined || typeof name !== 'string' || !TOKEN.test(name)) return this[REAL]().get(name);
    const value = this.#headers[name.toLowerCase()];
    // Own values only: `req.headers` is a plain object (`constructor` is not a header).
    if (typeof value === 'string') return value;
    return Array.isArray(value) ? value.join(', ') : null;
  }

  has(name: string): boolean {
    if (this.#real !== undefined || typeof name !== 'string' || !TOKEN.test(name)) return this[REAL]().has(name);
    return this.get(name) !== null;
  }

  [REAL](): Headers {
    this.#real ??= headersOf(this.#headers);
    return this.#real;
  }

  static readonly supported = selfTest(() => {
    if (typeof Headers !== 'function') return false;
    delegateTo(NodeHeaders.prototype, Headers, OWN, new Headers());
    const view = new NodeHeaders({ 'x-probe': '1', 'x-two': ['a', 'b'] }) as unknown as Headers;
    const copy = new Headers(view);
    const request = new Request('http://localhost/', { headers: view });
    return (
      view instanceof Headers &&
      view.get('X-Probe') === '1' &&
      copy.get('x-two') === 'a, b' &&
      request.headers.get('x-probe') === '1' &&
      [...view.keys()].join() === 'x-probe,x-two'
    );
  });
}
