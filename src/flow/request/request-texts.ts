/**
 * What each refused request check says (the message of its
 * `InvalidRequestError`, after the field). Loaded with `import()` by
 * request-problem.ts only when a request is refused: a page whose requests
 * pass never downloads these texts. It imports nothing, so it shares no
 * chunk with the client.
 */

/** Each text, given the check's detail (the method, the port, the type found, …). */
const TEXTS = {
  verb: (d: string) => `${d} is a method fetch refuses to send`,
  readBody: (d: string) => `a ${d} request cannot carry a body`,
  scheme: (d: string) => `${d} is not http: or https:`,
  userinfo: () => 'credentials (user:password@) are never stored: send them from the client `headers` callback',
  port: (d: string) => `port ${d} is blocked by fetch`,
  query: () =>
    'looks like a credential, never stored: send it from the client `headers` callback, or allow it in `storeQuery`',
  controller: () => 'is an AbortController: pass its AbortSignal, `controller.signal`',
  signal: () => 'must be an AbortSignal',
  schema: () => 'must be a Standard Schema (zod >= 3.24, valibot, arktype); wrap a parse-only one',
  meta: () => 'must be a plain object',
  finite: () => 'must be a finite number',
  json: (d: string) => `cannot be stored as JSON (${d})`,
  deep: (d: string) => `nests deeper than ${d} levels`,
  cycle: () => 'refers to itself (a cycle)',
  plain: () => 'is not a plain object (convert it to JSON data first)',
  name: () => 'is not a usable name',
  both: () => 'give either `json` or `body`, not both',
  reference: () => 'must be a string of 1 to 256 characters',
  headers: () => 'must be an object',
  secret: () => 'credentials are never stored: send them from the client `headers` callback',
  keyHeader: () => 'pass the idempotency key as `key`, not as a header',
  unstored: (d: string) =>
    `is not stored (only ${d} and \`storeHeaders\` names are): send it from the client \`headers\` callback, or add it to \`storeHeaders\``,
  // `detail`: empty (JSON.stringify gave nothing), or `: ` and what it threw.
  serialise: (d: string) => `cannot be serialised${d}`,
  bodyKind: (d: string) =>
    `must be a string, Uint8Array or ArrayBuffer (got ${d}): its bytes are stored and resent after a crash, and a stream can be read only once; serialise it, or pass \`json\``,
} satisfies Record<string, (detail: string) => string>;

export type RequestTextId = keyof typeof TEXTS;

/** The message for a refused check. */
export function requestText(id: RequestTextId, detail: string): string {
  return TEXTS[id](detail);
}
