/**
 * What the checks send and see: one request with a chosen key form and body
 * text, its answer read whole.
 */
import type { ServerConformanceOptions } from './types.js';

export interface Seen {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, when it is JSON. */
  json: unknown;
}

export interface Sender {
  /** `key` is sent as given (`"…"` or bare); undefined sends none. */
  send(options: { key?: string; body: string; headers?: Record<string, string>; timeoutMs?: number }): Promise<Seen>;
  /** A new operation's body, as JSON text. */
  nextBody(): Record<string, unknown>;
  /** A key no earlier run has used, bare (the sf-string form is `"${key}"`). */
  freshKey(rule: string): string;
  keyHeader: string;
}

export function sender(options: ServerConformanceOptions): Sender {
  const doFetch = options.fetch ?? globalThis.fetch;
  const method = options.method ?? 'POST';
  const keyHeader = options.keyHeader ?? 'Idempotency-Key';
  const makeBody = options.body ?? ((n: number) => ({ amount: 100 + n, currency: 'eur' }));
  const run = crypto.randomUUID().slice(0, 8);
  let n = 0;
  return {
    keyHeader,
    nextBody: () => makeBody(++n),
    freshKey: (rule) => `conf-${run}-${rule}-${++n}`,
    async send({ key, body, headers, timeoutMs }) {
      const all: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers, ...headers };
      if (key !== undefined) all[keyHeader] = key;
      const signal = timeoutMs === undefined ? null : AbortSignal.timeout(timeoutMs);
      const response = await doFetch(options.url, { method, headers: all, body, signal });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, text, json };
    },
  };
}

/** The same object serialised another way: keys reversed, spaces and a newline added. */
export function reserialised(value: Record<string, unknown>): string {
  const entries = Object.entries(value).reverse();
  return `{\n  ${entries.map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`).join(',\n  ')}\n}`;
}

export const isProblem = (seen: Seen) =>
  (seen.headers.get('content-type') ?? '').toLowerCase().startsWith('application/problem+json');

export const isReplay = (seen: Seen) => seen.headers.get('idempotent-replayed')?.trim().toLowerCase() === 'true';

export function describeSeen(seen: Seen): string {
  const type = (seen.json as { type?: unknown } | undefined)?.type;
  const marks = [
    `status ${seen.status}`,
    seen.headers.get('content-type') ?? 'no Content-Type',
    typeof type === 'string' ? `type ${type}` : undefined,
    isReplay(seen) ? 'Idempotent-Replayed: true' : undefined,
    seen.headers.get('retry-after') === null ? undefined : `Retry-After: ${seen.headers.get('retry-after')}`,
  ];
  return marks.filter((m) => m !== undefined).join(', ');
}
