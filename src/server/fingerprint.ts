/**
 * The fingerprint of a request: SHA-256 of its method, target (path and
 * query, as sent) and body. A JSON body is compared by meaning (RFC 8785
 * canonical JSON), so a client that re-serialises it with another key
 * order or whitespace on a retry is not refused as a key reuse (a
 * re-serialised body turning into a 422 is a bug of other libraries); any
 * other body is compared byte for byte.
 *
 * The canonical JSON is RFC 8785's for what `JSON.parse` returns (keys
 * sorted by UTF-16 code units, ECMAScript number and string forms), written
 * here for that input alone: no `toJSON`, no cycles, no `undefined` to
 * handle, and a lone surrogate (`"\ud800"`, which RFC 8785 refuses and
 * `canonicalize` throws on) serialised as `JSON.stringify` escapes it rather
 * than failing the request. test/server/fingerprint.test.ts holds it to
 * `canonicalize`'s output.
 *
 * Hashed text: `<method> <target>\n` then `json:<canonical JSON>`,
 * `bytes:<the body>` or `empty:`. The method is a token and the target has
 * no space or newline (both as the HTTP parser accepted them), so the
 * layout is unambiguous. Runs on every guarded request: one parse (shared
 * with the Node middleware's `req.body`), one canonical serialisation, one
 * one-shot hash.
 */

/** `application/json` and every `+json` type (problem+json, merge-patch+json…). */
export function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** One decoder for every request (a `TextDecoder` costs more to make than to use). */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body, parsed: `{ value }`; `undefined` when the type is not JSON, the body is empty or it does not parse. */
export function parseJsonBody(bytes: Uint8Array, contentType: string | null): { value: unknown } | undefined {
  if (bytes.length === 0 || !isJsonMediaType(contentType)) return undefined;
  try {
    return { value: JSON.parse(utf8.decode(bytes)) as unknown };
  } catch {
    // Not JSON after all (or not UTF-8): its bytes are what the server received, compare those.
    return undefined;
  }
}

/**
 * RFC 8785 canonical JSON of a value `JSON.parse` returned. A body whose
 * keys are in order already (every object's keys ascending by UTF-16 code
 * units, as many clients send them) is `JSON.stringify`'s output as it is:
 * the same number, string and key forms, and one native call instead of a
 * string built key by key.
 */
export function canonicalJson(value: unknown): string {
  return inCanonicalOrder(value) ? JSON.stringify(value) : sortedJson(value);
}

/** Whether every object in `value` lists its keys (as `JSON.stringify` will) in ascending code-unit order. */
function inCanonicalOrder(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inCanonicalOrder(value[i])) return false;
    return true;
  }
  const record = value as Record<string, unknown>;
  let previous: string | undefined;
  for (const key of Object.keys(record)) {
    // `<` on strings compares UTF-16 code units, as RFC 8785's sort does.
    if ((previous !== undefined && !(previous < key)) || !inCanonicalOrder(record[key])) return false;
    previous = key;
  }
  return true;
}

/** The canonical form built key by key, each object's keys sorted. */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + sortedJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${sortedJson(record[key])}`;
  }
  return `${out}}`;
}

/**
 * `json`: the body already parsed by `parseJsonBody` (the Node middleware
 * parses once for both), else it is parsed here. A string where the hash
 * is synchronous (Node's), so the guard awaits nothing for it.
 */
export function fingerprintOf(
  method: string,
  target: string,
  body: Uint8Array,
  contentType: string | null,
  json: { value: unknown } | undefined = parseJsonBody(body, contentType),
): string | Promise<string> {
  const head = `${method} ${target}\n`;
  if (json !== undefined) return sha256Hex(`${head}json:${canonicalJson(json.value)}`);
  if (body.length === 0) return sha256Hex(`${head}empty:`);
  return sha256Hex(`${head}bytes:`, body);
}

interface NodeHash {
  update(data: string | Uint8Array): NodeHash;
  digest(encoding: 'hex'): string;
}
interface NodeCrypto {
  /** One-shot (Node ≥ 20.12): no Hash object per call. */
  hash?: (algorithm: string, data: string, encoding: 'hex') => string;
  createHash(algorithm: string): NodeHash;
}

/**
 * Node's own hash when the runtime offers it without an import
 * (`process.getBuiltinModule`, Node ≥ 20.16): synchronous and a fraction of
 * WebCrypto's cost there. WebCrypto everywhere else (workers, Deno, browsers).
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

const encoder = new TextEncoder();

/** SHA-256 of `text` followed by `bytes`, in hex: at once with Node's hash, else a promise of WebCrypto's. */
export function sha256Hex(text: string, bytes?: Uint8Array): string | Promise<string> {
  if (nodeCrypto !== undefined) {
    if (bytes === undefined) {
      return nodeCrypto.hash?.('sha256', text, 'hex') ?? nodeCrypto.createHash('sha256').update(text).digest('hex');
    }
    return nodeCrypto.createHash('sha256').update(text).update(bytes).digest('hex');
  }
  return webCryptoSha256Hex(text, bytes);
}

async function webCryptoSha256Hex(text: string, bytes: Uint8Array | undefined): Promise<string> {
  const head = encoder.encode(text);
  const data = bytes === undefined ? head : new Uint8Array(head.length + bytes.length);
  if (bytes !== undefined) {
    data.set(head);
    data.set(bytes, head.length);
  }
  const digest = await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
