import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** A request body decoded once and used for both the fingerprint and the handler. */
export interface DecodedBody {
  /** What goes into the fingerprint: parsed JSON, or the raw bytes as base64. */
  canonical: unknown;
  /** What the handler sees: parsed JSON, raw text, or `undefined` when empty. */
  value: unknown;
}

/** `application/json` and any `+json` suffix type (problem+json, merge-patch+json...). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * JSON bodies are compared by meaning, not bytes, so a client that serializes
 * keys in a different order on retry is not mistaken for a key reuse.
 */
export function decodeBody(raw: Buffer, contentType: string | undefined): DecodedBody {
  if (isJsonContentType(contentType) && raw.length > 0) {
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      return { canonical: parsed, value: parsed };
    } catch {
      // Not valid JSON despite the header: fall back to comparing bytes.
    }
  }
  return {
    canonical: raw.toString('base64'),
    value: raw.length > 0 ? raw.toString('utf8') : undefined,
  };
}

/** SHA-256 hex of the RFC 8785 form of `{ method, path, body }`. */
export function fingerprintRequest(method: string, path: string, body: DecodedBody): string {
  const text = canonicalize({ method, path, body: body.canonical }) ?? '';
  return createHash('sha256').update(text).digest('hex');
}
