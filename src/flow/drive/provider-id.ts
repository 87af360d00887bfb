/**
 * The provider's id for an operation, read from an attempt's answer by the
 * rule's `providerId` (default: the JSON body's string `id` of a non-2xx
 * answer; a 2xx is kept whole as the result). Kept on the
 * attempt, so a `reconcile` hook can look the operation up by it after the
 * provider forgot the key: a 500 that still names the payment it created
 * is the best lead an `unknown` operation has.
 */
import type { ProviderAnswer } from '../../policy/reconcile.js';
import { isJsonType } from '../transport/result.js';
import type { AttemptOutput } from './attempt.js';

/** Bodies longer than this are not parsed for an id (a 2xx body is parsed again when read). */
const MAX_SCANNED_BYTES = 16_384;
const MAX_ID_LENGTH = 256;
const utf8 = new TextDecoder();

/**
 * The default `providerId`: a string `id` at the top of a JSON body. Here,
 * not in policy/reconcile.ts: every attempt may read it, while the rest of
 * that module is needed only once an operation is reconciled (it travels in
 * the chunk loaded then).
 */
export function bodyId(answer: ProviderAnswer): string | undefined {
  const data = answer.data as { id?: unknown } | null | undefined;
  return typeof data === 'object' && data !== null && typeof data.id === 'string' && data.id !== ''
    ? data.id
    : undefined;
}

export function providerIdOf(
  output: AttemptOutput,
  extractor: ((answer: ProviderAnswer) => string | undefined) | undefined,
): string | undefined {
  const observation = output.observation;
  if (observation.kind !== 'response') return undefined;
  // The default reads a JSON `id`, of an answer that does not settle the operation: a 2xx keeps its whole body
  // as the result (the id with it), so the common path reads nothing more. A body without `"id"` is not parsed.
  if (extractor === undefined && observation.status >= 200 && observation.status < 300) return undefined;
  const json = isJsonType(output.headers['content-type']);
  const bytes = output.bytes;
  if (extractor === undefined && (!json || bytes === undefined || bytes.length > MAX_SCANNED_BYTES)) return undefined;
  let data: unknown;
  if (bytes !== undefined && bytes.length > 0 && bytes.length <= MAX_SCANNED_BYTES) {
    const text = utf8.decode(bytes);
    if (extractor === undefined && !text.includes('"id"')) return undefined;
    try {
      data = json ? JSON.parse(text) : text;
    } catch {
      data = text;
    }
  }
  try {
    const id = (extractor ?? bodyId)({ status: observation.status, headers: output.headers, data });
    return typeof id === 'string' && id !== '' ? id.slice(0, MAX_ID_LENGTH) : undefined;
  } catch {
    // An extractor that throws learns nothing: the attempt's outcome stands as it is.
    return undefined;
  }
}
