/**
 * The fingerprint of a request: SHA-256 of the RFC 8785 canonical JSON of
 * its method, target (path and query, as sent) and body. A JSON body is
 * compared by meaning, so a client that re-serialises it with another key
 * order or whitespace on a retry is not refused as a key reuse (a
 * re-serialised body turning into a 422 is a bug of other libraries);
 * any other body is compared byte for byte.
 */
import canonicalize from 'canonicalize';

/** `application/json` and every `+json` type (problem+json, merge-patch+json…). */
export function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function canonicalBody(bytes: Uint8Array, contentType: string | null): unknown {
  if (bytes.length === 0) return { empty: true };
  if (isJsonMediaType(contentType)) {
    try {
      return { json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown };
    } catch {
      // Not JSON after all (or not UTF-8): its bytes are what the server received, compare those.
    }
  }
  return { bytes: toBase64(bytes) };
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export async function fingerprintOf(
  method: string,
  target: string,
  body: Uint8Array,
  contentType: string | null,
): Promise<string> {
  const text = canonicalize({ method, target, body: canonicalBody(body, contentType) }) ?? '';
  return sha256Hex(text);
}

type NodeCrypto = { createHash(algorithm: string): { update(text: string): { digest(encoding: 'hex'): string } } };

/**
 * Node's own hash when the runtime offers it without an import
 * (`process.getBuiltinModule`, Node ≥ 20.16): synchronous and a fraction of
 * WebCrypto's cost there. WebCrypto everywhere else (workers, Deno, browsers).
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

export async function sha256Hex(text: string): Promise<string> {
  if (nodeCrypto !== undefined) return nodeCrypto.createHash('sha256').update(text).digest('hex');
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
