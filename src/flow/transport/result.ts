/**
 * Turning bytes into stored bodies and back, and choosing which response
 * headers are kept. Stored results are replayed to repeat sends, so they keep
 * only what describes the result (never `Set-Cookie` and the like).
 */

import type { StoredBody } from '../../model.js';
import { base64ToBytes, bytesToBase64 } from '../request/bytes.js';

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
export function storedBodyFrom(
  bytes: Uint8Array | undefined,
  contentType: string | undefined,
  keepParsed = false,
): StoredBody | undefined {
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
        const parsed: unknown = JSON.parse(decoded);
        if (keepParsed) keepForFirstRead(decoded, parsed);
        return { encoding: 'json', text: decoded };
      } catch {
        return { encoding: 'text', text: decoded };
      }
    }
    return { encoding: 'text', text: decoded };
  }
  return { encoding: 'base64', data: bytesToBase64(bytes) };
}

/**
 * A stored result's JSON is parsed once when it is stored (to tell JSON from
 * a broken body) and once more when the caller reads it: the first parse is
 * kept here, keyed by the text (the store copies records, but strings are
 * shared), for the one read that follows. Each value is handed out at most
 * once (taken, not looked up), so no two callers ever share a mutable object;
 * any later read of the same result parses afresh. Bounded in count and size:
 * a result nobody reads (a caller that stopped waiting) is evicted, oldest first.
 */
const parsedOnce = new Map<string, { value: unknown }>();
/** Entries kept at most: more than the results typically between storing and reading at 32 in flight. */
export const PARSED_KEPT_MAX = 64;
/** Texts longer than this are parsed twice rather than held (a cache must not hold megabytes). */
export const PARSED_KEPT_MAX_CHARS = 16_384;

function keepForFirstRead(text: string, value: unknown): void {
  if (text.length > PARSED_KEPT_MAX_CHARS) return;
  parsedOnce.delete(text);
  parsedOnce.set(text, { value });
  if (parsedOnce.size > PARSED_KEPT_MAX) parsedOnce.delete(parsedOnce.keys().next().value as string);
}

/** The kept parse of `text`, removed as it is taken; undefined when there is none (parse it). */
function takeParsed(text: string): { value: unknown } | undefined {
  const kept = parsedOnce.get(text);
  if (kept !== undefined) parsedOnce.delete(text);
  return kept;
}

/** Parsed results waiting for their first read (for tests of the bound). */
export function parsedKeptCount(): number {
  return parsedOnce.size;
}

/** Stateless between calls (no `stream` option): one instance serves every result. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The caller-facing value of a stored body: parsed JSON, a string, or bytes. */
export function bodyValue(body: StoredBody | undefined): unknown {
  if (body === undefined) return undefined;
  switch (body.encoding) {
    case 'json': {
      const kept = takeParsed(body.text);
      return kept !== undefined ? kept.value : (JSON.parse(body.text) as unknown);
    }
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
