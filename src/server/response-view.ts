/**
 * The `Response` a `wrap`ped handler's caller gets, as a view of the answer
 * the guard holds (its bytes read to be stored, or a stored one replayed).
 *
 * A real `Response` from those bytes would be the third body stream of a
 * guarded request on Node (after the request's and the handler's), each
 * one costly to make, and the adapter that sends it would read the bytes
 * back out of it. Adapters mostly read its status, headers and bytes: the
 * view answers those from the answer, and builds the real `Response` for
 * anything else (`body` as a stream, `clone()`…), as request-view.ts does
 * for requests. Where the runtime's `Response` does not take a view (a
 * self-test on first use), `wrap` returns real ones as before.
 */
import { type Answer, toResponse } from './replay.js';
import { BODY_USED, delegateTo, REAL, type View } from './view.js';

const utf8 = new TextDecoder();

/** `Response.prototype` members a view answers itself; every other one goes to the real `Response`. */
const OWN = new Set<PropertyKey>([
  'status',
  'statusText',
  'ok',
  'headers',
  'bodyUsed',
  'text',
  'json',
  'arrayBuffer',
  'bytes',
]);

/** The answer as a `Response`: a view where the runtime takes one. */
export function responseOf(answer: Answer): Response {
  return ResponseView.supported() ? (new ResponseView(answer) as unknown as Response) : toResponse(answer);
}

class ResponseView implements View<Response> {
  readonly #answer: Answer;
  #headers: Headers | undefined = undefined;
  #real: Response | undefined = undefined;
  #used = false;

  constructor(answer: Answer) {
    this.#answer = answer;
  }

  get status(): number {
    return this.#answer.status;
  }

  get statusText(): string {
    return this.#answer.statusText ?? '';
  }

  get ok(): boolean {
    return this.#answer.status >= 200 && this.#answer.status <= 299;
  }

  /** A copy of the answer's, made once: as a new `Response`'s, they are its own and can be changed. */
  get headers(): Headers {
    if (this.#real !== undefined) return this.#real.headers;
    this.#headers ??= new Headers(this.#answer.headers);
    return this.#headers;
  }

  get bodyUsed(): boolean {
    return this.#real === undefined ? this.#used : this.#real.bodyUsed;
  }

  async text(): Promise<string> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().text() : utf8.decode(bytes);
  }

  async json(): Promise<unknown> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().json() : JSON.parse(utf8.decode(bytes));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().arrayBuffer() : (bytes.slice().buffer as ArrayBuffer);
  }

  async bytes(): Promise<Uint8Array> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().bytes() : bytes.slice();
  }

  /**
   * The body bytes, once; `undefined` when the real one answers (built
   * already, or a response with no body, whose reads never fail).
   */
  #take(): Uint8Array | undefined {
    if (this.#real !== undefined || this.#answer.body.length === 0) return undefined;
    if (this.#used) throw new TypeError(BODY_USED);
    this.#used = true;
    return this.#answer.body;
  }

  /** The real `Response`, built on first need, with the headers as the view gave them (changed or not). */
  [REAL](): Response {
    if (this.#real !== undefined) return this.#real;
    const real = toResponse({ ...this.#answer, headers: this.headers });
    // Read through the view already: the real one's body is spent too (reading it marks it so at once).
    if (this.#used) real.arrayBuffer().catch(() => undefined);
    this.#real = real;
    return real;
  }

  static #works: boolean | undefined;

  static supported(): boolean {
    ResponseView.#works ??= ResponseView.#install();
    return ResponseView.#works;
  }

  static #install(): boolean {
    if (typeof Response !== 'function') return false;
    try {
      delegateTo(ResponseView.prototype, Response, OWN, new Response('x'));
      const view = new ResponseView({
        status: 201,
        headers: new Headers({ 'x-probe': '1' }),
        body: new Uint8Array([49]),
      }) as unknown as Response;
      // The runtime's own getter, on the view: what a server reading the response's internal state meets.
      const status = Object.getOwnPropertyDescriptor(Response.prototype, 'status')?.get?.call(view);
      const copy = view.clone();
      return (
        view instanceof Response &&
        status === 201 &&
        copy instanceof Response &&
        copy.headers.get('x-probe') === '1' &&
        view.body instanceof ReadableStream
      );
    } catch {
      return false;
    }
  }
}
