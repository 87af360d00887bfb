/**
 * Reading the idempotency key from its header.
 *
 * draft-ietf-httpapi-idempotency-key-header makes the value a structured
 * field string (RFC 8941 sf-string): `Idempotency-Key: "8e03978e-…"`.
 * oncely's own client, Stripe's SDKs and most others send the key bare
 * (`Idempotency-Key: 8e03978e-…`), so a bare key is accepted too
 * (`acceptBareKey`, default true): `"abc"` and `abc` name the same key, and
 * a client that switches between the two forms keeps its key.
 */

export type KeyReading =
  | { kind: 'missing' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'key'; key: string; form: 'sf-string' | 'bare' };

/** Characters of a bare key: visible ASCII that cannot be mistaken for structure (no quote, comma, semicolon, backslash). */
const BARE = /^[A-Za-z0-9!#$%&'*+.^_`|~:/=@?-]+$/;

export interface KeyRules {
  maxKeyLength: number;
  acceptBareKey: boolean;
}

/** `value` is the header as `Headers.get` joins it (several lines become `a, b`). */
export function readKey(value: string | null, rules: KeyRules): KeyReading {
  if (value === null) return { kind: 'missing' };
  const raw = value.trim();
  if (raw === '') return { kind: 'invalid', reason: 'the header is empty' };
  const reading = raw.startsWith('"') ? parseSfString(raw) : parseBare(raw, rules.acceptBareKey);
  if (reading.kind !== 'key') return reading;
  if (reading.key.length === 0) return { kind: 'invalid', reason: 'the key is empty' };
  if (reading.key.length > rules.maxKeyLength) {
    return {
      kind: 'invalid',
      reason: `the key is ${reading.key.length} characters, over the limit of ${rules.maxKeyLength}`,
    };
  }
  return reading;
}

function parseBare(raw: string, accepted: boolean): KeyReading {
  if (!accepted) return { kind: 'invalid', reason: 'the key must be a structured-field string: "…" in double quotes' };
  if (!BARE.test(raw)) {
    return {
      kind: 'invalid',
      reason: "a bare key may hold letters, digits and !#$%&'*+.^_`|~:/=@?- only (one key, no list)",
    };
  }
  return { kind: 'key', key: raw, form: 'bare' };
}

/** RFC 8941 §4.2.5: printable ASCII, `\"` and `\\` the only escapes; nothing may follow the closing quote. */
function parseSfString(raw: string): KeyReading {
  let key = '';
  for (let i = 1; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c) {
      const next = raw[i + 1];
      if (next !== '"' && next !== '\\')
        return { kind: 'invalid', reason: 'a structured-field string escapes only " and \\' };
      key += next;
      i += 1;
    } else if (c === 0x22) {
      if (i !== raw.length - 1)
        return { kind: 'invalid', reason: 'one structured-field string, with nothing after it' };
      return { kind: 'key', key, form: 'sf-string' };
    } else if (c < 0x20 || c > 0x7e) {
      return { kind: 'invalid', reason: 'a structured-field string holds printable ASCII only' };
    } else {
      key += raw[i];
    }
  }
  return { kind: 'invalid', reason: 'the structured-field string has no closing quote' };
}
