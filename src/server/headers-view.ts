/**
 * A `Headers` of its own, as a new `Response`'s are, that costs nothing
 * until written to: reads (`get`, `has`, `getSetCookie`, `forEach`,
 * iteration) answer from the headers it was made from, and the first
 * write (`set`, `append`, `delete`) copies them into a real `Headers` that
 * answers everything from then on (view.ts). The `Response` a `wrap`ped
 * handler's caller gets has these: an adapter that sends it only reads
 * them, and a copy for every response was a cost on every request.
 */
import { delegateTo, REAL, selfTest, type View } from './view.js';

/** `Headers.prototype` members the view answers itself. */
const OWN = new Set<PropertyKey>([
  'get',
  'has',
  'getSetCookie',
  'forEach',
  'keys',
  'values',
  'entries',
  Symbol.iterator,
]);

/** `source`'s headers as a `Headers` of their own: a view where the runtime takes one, else a copy. */
export function ownHeadersOf(source: Headers): Headers {
  return HeadersCopy.supported() ? (new HeadersCopy(source) as unknown as Headers) : new Headers(source);
}

class HeadersCopy implements View<Headers> {
  readonly #source: Headers;
  #real: Headers | undefined = undefined;

  constructor(source: Headers) {
    this.#source = source;
  }

  /** The headers read: the copy once one was made, else the source. */
  get #read(): Headers {
    return this.#real ?? this.#source;
  }

  get(name: string): string | null {
    return this.#read.get(name);
  }

  has(name: string): boolean {
    return this.#read.has(name);
  }

  getSetCookie(): string[] {
    return this.#read.getSetCookie();
  }

  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#read.forEach((value, name) => {
      callback.call(thisArg, value, name, this as unknown as Headers);
    });
  }

  keys(): HeadersIterator<string> {
    return this.#read.keys();
  }

  values(): HeadersIterator<string> {
    return this.#read.values();
  }

  entries(): HeadersIterator<[string, string]> {
    return this.#read.entries();
  }

  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.#read.entries();
  }

  /** The copy, made on the first write. */
  [REAL](): Headers {
    this.#real ??= new Headers(this.#source);
    return this.#real;
  }

  static readonly supported = selfTest(() => {
    if (typeof Headers !== 'function' || typeof Response !== 'function') return false;
    delegateTo(HeadersCopy.prototype, Headers, OWN, new Headers());
    // Immutable, as a redirect's are: the view's must still take writes, and leave these alone.
    const source = Response.redirect('http://localhost/probe', 303).headers;
    const view = new HeadersCopy(source) as unknown as Headers;
    const before = [...view].length;
    view.set('x-probe', '1');
    const copy = new Headers(view);
    const response = new Response(null, { headers: view });
    return (
      view instanceof Headers &&
      before === 1 &&
      source.get('x-probe') === null &&
      view.get('location') === 'http://localhost/probe' &&
      copy.get('x-probe') === '1' &&
      response.headers.get('location') === 'http://localhost/probe' &&
      response.headers.get('x-probe') === '1'
    );
  });
}
