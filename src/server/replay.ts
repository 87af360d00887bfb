/**
 * Responses into stored outcomes and back: which outcomes a replay policy
 * keeps, what of a response is stored (status, allow-listed headers, the
 * exact body bytes), and the replay itself, marked `Idempotent-Replayed: true`.
 */
import type { ReplayPolicy } from './options.js';
import { exposeHeaders } from './problems.js';
import type { StoredResponse } from './store.js';

/** Whether `status` is stored for replay under `policy`; otherwise the key is released. */
export function keeps(policy: ReplayPolicy, status: number): boolean {
  switch (policy) {
    case 'stripe':
      return true;
    case 'deterministic':
      return status < 500;
    case 'success-only':
      return status >= 200 && status < 300;
  }
}

/**
 * What storing needs of a response's headers (lower-case names): Fetch's
 * `Headers` has it, and so has the Node middleware's view of `res`, which
 * builds no `Headers` for a response it only has to send and store.
 * `get` joins several values with `, `, as `Headers.get` does.
 */
export interface HeaderSource {
  get(name: string): string | null;
  forEach(callback: (value: string, name: string) => void): void;
}

/**
 * A response read to its end: the bytes stay in hand, so it can be both
 * stored and sent. The core works on these, not on `Response` objects: the
 * Node middleware never needs one, and each `Response` built costs.
 */
export interface Answer<H extends HeaderSource = Headers> {
  status: number;
  statusText?: string;
  headers: H;
  body: Uint8Array;
}

/** `response` (or the promise of it) read to its end. */
export async function answerOf(response: Response | Promise<Response>): Promise<Answer> {
  const read = await response;
  const body = new Uint8Array(await read.arrayBuffer());
  return { status: read.status, statusText: read.statusText, headers: read.headers, body };
}

/**
 * `allowed`: the allow-list, lower case, in ascending order (the order
 * Fetch's `Headers` lists names in, so a stored list reads the same from
 * either entry point). Each allowed name is looked up, rather than every
 * header read and filtered: the list is short (two names by default),
 * while listing `Headers` sorts them all and listing `res`'s copies them.
 * `Set-Cookie`, the one header whose values `get` cannot keep apart, is
 * never allowed (options.ts).
 */
export function storedOf(answer: Answer<HeaderSource>, allowed: readonly string[]): StoredResponse {
  const headers: [string, string][] = [];
  const source = answer.headers;
  for (const name of allowed) {
    const value = source.get(name);
    if (value !== null) headers.push([name, value]);
  }
  return { status: answer.status, headers, body: answer.body };
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function toResponse(answer: Answer): Response {
  const empty = NULL_BODY.has(answer.status) || answer.body.length === 0;
  return new Response(empty ? null : (answer.body as Uint8Array<ArrayBuffer>), {
    status: answer.status,
    ...(answer.statusText === undefined ? {} : { statusText: answer.statusText }),
    headers: answer.headers,
  });
}

export function replayOf(stored: StoredResponse): Answer {
  const headers = new Headers();
  for (const [name, value] of stored.headers) headers.append(name, value);
  headers.set('Idempotent-Replayed', 'true');
  exposeHeaders(headers);
  return { status: stored.status, headers, body: stored.body };
}
