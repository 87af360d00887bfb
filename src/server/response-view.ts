/**
 * The `Response` a `wrap`ped handler's caller gets, as a view of the answer
 * the guard holds (its bytes read to be stored, or a stored one replayed).
 *
 * A real `Response` from those bytes would be the third body stream of a
 * guarded request on Node (after the request's and the handler's), each
 * one costly to make, and the adapter that sends it would read the bytes
 * back out of it. Adapters mostly read its status, headers and bytes: the
 * view answers those from the answer, and builds the real `Response` for
 * anything else (`body` as a stream, `clone()`…), as request views do
 * (view.ts). Where the runtime's `Response` does not take a view (a
 * self-test on first use), `wrap` returns real ones as before.
 */
import { ownHeadersOf } from './headers-view.js';
import { type Answer, toResponse } from './replay.js';
import { BODY_MEMBERS, BodyView, delegateTo, selfTest } from './view.js';

/** `Response.prototype` members a view answers itself; every other one goes to the real `Response`. */
const OWN = new Set<PropertyKey>(['status', 'statusText', 'ok', 'headers', ...BODY_MEMBERS]);

/** The answer as a `Response`: a view where the runtime takes one. */
export function responseOf(answer: Answer): Response {
  return ResponseView.supported() ? (new ResponseView(answer) as unknown as Response) : toResponse(answer);
}

class ResponseView extends BodyView<Response> {
  readonly #answer: Answer;
  #headers: Headers | undefined = undefined;

  constructor(answer: Answer) {
    // A response without a body has nothing to give once: its reads are the real one's, which never fail.
    super(answer.body.length === 0 ? undefined : answer.body, undefined);
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

  /** The answer's, as a `Headers` of its own (a new `Response`'s can be changed), copied on the first change. */
  get headers(): Headers {
    const real = this.built;
    if (real !== undefined) return real.headers;
    this.#headers ??= ownHeadersOf(this.#answer.headers);
    return this.#headers;
  }

  /** With the headers as the view gave them (changed or not). */
  protected build(): Response {
    return toResponse({ ...this.#answer, headers: this.headers });
  }

  static readonly supported = selfTest(() => {
    if (typeof Response !== 'function') return false;
    delegateTo(ResponseView.prototype, Response, OWN, new Response('x'), BodyView.prototype);
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
  });
}
