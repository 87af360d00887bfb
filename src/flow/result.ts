/**
 * Turning bytes into stored bodies and back, and choosing which response
 * headers are kept. Stored results are replayed to repeat sends, so they keep
 * only what describes the result (never `Set-Cookie` and the like).
 */

import type { StoredBody } from '../model.js';
import { base64ToBytes, bytesToBase64 } from './bytes.js';

/** Response headers kept with a stored result, besides any configured. */
export const RESULT_HEADERS: readonly string[] = [
  'content-type',
  'content-location',
  'location',
  'etag',
  'last-modified',
  'idempotent-replayed',
  'request-id',
  'x-request-id',
  'original-request',
];

export function storedResponseHeaders(
  headers: Record<string, string>,
  extra: readonly string[],
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of [...RESULT_HEADERS, ...extra.map((h) => h.toLowerCase())]) {
    const value = headers[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/** `application/json`, `application/problem+json`, … (any `/json` or `+json` media type). */
export function isJsonType(contentType: string | undefined): boolean {
  return /[/+]json\b/.test((contentType ?? '').toLowerCase());
}

/**
 * JSON stays JSON text, other text stays text, anything else becomes base64.
 * A body labelled JSON that does not parse is kept as text (or base64, when
 * it is not even UTF-8): what the server sent is kept as sent.
 */
export function storedBodyFrom(bytes: Uint8Array | undefined, contentType: string | undefined): StoredBody | undefined {
  if (bytes === undefined || bytes.length === 0) return undefined;
  const type = (contentType ?? '').toLowerCase();
  if (isJsonType(type) || /^text\//.test(type)) {
    let decoded: string;
    try {
      decoded = strictUtf8.decode(bytes);
    } catch {
      return { encoding: 'base64', data: bytesToBase64(bytes) };
    }
    if (isJsonType(type)) {
      try {
        JSON.parse(decoded);
        return { encoding: 'json', text: decoded };
      } catch {
        return { encoding: 'text', text: decoded };
      }
    }
    return { encoding: 'text', text: decoded };
  }
  return { encoding: 'base64', data: bytesToBase64(bytes) };
}

/** Stateless between calls (no `stream` option): one instance serves every result. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The caller-facing value of a stored body: parsed JSON, a string, or bytes. */
export function bodyValue(body: StoredBody | undefined): unknown {
  if (body === undefined) return undefined;
  switch (body.encoding) {
    case 'json':
      return JSON.parse(body.text) as unknown;
    case 'text':
      return body.text;
    case 'base64':
      return base64ToBytes(body.data);
  }
}

/**
 * The text of a body labelled JSON that is not JSON (kept as text or base64
 * by `storedBodyFrom`), else undefined. An empty body is no body, not a
 * broken one (`HEAD`, a `201` without content).
 */
export function unparsedJsonText(answer: {
  headers: Record<string, string>;
  body?: StoredBody | undefined;
}): string | undefined {
  const body = answer.body;
  if (body === undefined || body.encoding === 'json' || !isJsonType(answer.headers['content-type'])) return undefined;
  return body.encoding === 'text' ? body.text : lenientUtf8.decode(base64ToBytes(body.data));
}

/** Replaces bytes that are not UTF-8 with U+FFFD: for showing a broken body, never for storing one. */
const lenientUtf8 = new TextDecoder();
