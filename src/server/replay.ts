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

/** A response read to its end: the bytes stay in hand, so it can be both stored and sent. */
export interface Snapshot {
  status: number;
  statusText: string;
  headers: Headers;
  body: Uint8Array;
}

export async function snapshotOf(response: Response): Promise<Snapshot> {
  const body = new Uint8Array(await response.arrayBuffer());
  return { status: response.status, statusText: response.statusText, headers: response.headers, body };
}

export function storedOf(snapshot: Snapshot, allowed: ReadonlySet<string>): StoredResponse {
  const headers: [string, string][] = [];
  snapshot.headers.forEach((value, name) => {
    if (allowed.has(name)) headers.push([name, value]);
  });
  return { status: snapshot.status, headers, body: snapshot.body };
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function bodyOf(status: number, body: Uint8Array): BodyInit | null {
  // Our bytes are never on a SharedArrayBuffer (they come from arrayBuffer() or a database driver).
  return NULL_BODY.has(status) || body.length === 0 ? null : (body as Uint8Array<ArrayBuffer>);
}

/** The fresh answer, as the handler gave it (all its headers), its body already read. */
export function responseOf(snapshot: Snapshot): Response {
  return new Response(bodyOf(snapshot.status, snapshot.body), {
    status: snapshot.status,
    statusText: snapshot.statusText,
    headers: snapshot.headers,
  });
}

export function replayOf(stored: StoredResponse): Response {
  const headers = new Headers();
  for (const [name, value] of stored.headers) headers.append(name, value);
  headers.set('Idempotent-Replayed', 'true');
  exposeHeaders(headers);
  return new Response(bodyOf(stored.status, stored.body), { status: stored.status, headers });
}
