/**
 * Idempotency keys and request fingerprints.
 *
 * A key names one logical operation. It is minted (or derived, or given)
 * exactly once, before the first attempt, and stored with the operation;
 * nothing in the retry loop ever creates one.
 */
import canonicalize from 'canonicalize';
import { v5 as uuidv5 } from 'uuid';
import { InvalidRequestError } from '../../errors.js';
import type { StoredBody } from '../../model.js';
import { formatUuid, type Runtime, systemRuntime } from '../../runtime.js';

/** Characters allowed in a caller-given key: safe in headers, URLs and file names. */
const KEY_PATTERN = /^[A-Za-z0-9_\-.:]+$/;

/** Namespace of oncely's name-based (v5) keys, recipe version 1. Never change: old keys must stay stable. */
const DERIVED_KEY_NAMESPACE_V1 = 'b0f5c6a2-3c1e-5d8e-9a47-0c5e1d7f2b61';

/** Throws `InvalidRequestError` unless `key` is a usable idempotency key. */
export function assertValidKey(key: string, maxLength: number): void {
  if (key.length === 0 || key.length > maxLength) {
    throw new InvalidRequestError('key', `must be 1..${maxLength} characters (got ${key.length})`);
  }
  if (!KEY_PATTERN.test(key)) {
    throw new InvalidRequestError('key', 'may only contain A-Z a-z 0-9 _ - . :');
  }
}

/** Typed business identifiers a key is derived from. Plain scalars only: no display strings to rewrite. */
export type KeyFields = Readonly<Record<string, string | number | boolean>>;

export interface DeriveKeyInput {
  /** The operation type, e.g. `'checkout.pay'`. Distinct operations must use distinct namespaces. */
  namespace: string;
  /**
   * Version of your recipe. Bump it when the fields change meaning, so a new
   * recipe cannot collide with keys of the old one.
   */
  version: number;
  /** The identity of the business fact, e.g. `{ tenant: 't_1', cart: 'c_9', orderVersion: 3 }`. */
  fields: KeyFields;
}

export interface DeriveKeyOptions {
  /**
   * A secret for HMAC-SHA-256. Required when any field is guessable private
   * data (an email, a phone number): without it the key is a plain
   * name-based UUID that anyone can recompute from the inputs.
   */
  secret?: string | Uint8Array;
}

/**
 * Derives a stable key from a business identity. Field order never matters
 * (RFC 8785 canonical JSON). With a `secret` the key is an HMAC-SHA-256 of the
 * identity formatted as a UUIDv8; without one, a name-based UUIDv5.
 *
 * @example
 * const key = await deriveKey(
 *   { namespace: 'checkout.pay', version: 1, fields: { tenant: 't_1', cart: 'c_9', orderVersion: 3 } },
 *   { secret: process.env.KEY_SECRET },
 * );
 */
export async function deriveKey(input: DeriveKeyInput, options: DeriveKeyOptions = {}): Promise<string> {
  const canonical = canonicalIdentity(input);
  if (options.secret === undefined) return uuidv5(canonical, DERIVED_KEY_NAMESPACE_V1);
  const secret = typeof options.secret === 'string' ? utf8(options.secret) : Uint8Array.from(options.secret);
  if (secret.byteLength === 0) throw new InvalidRequestError('secret', 'must not be empty');
  const subtle = globalThis.crypto.subtle;
  const hmacKey = await subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle.sign('HMAC', hmacKey, utf8(canonical)));
  return uuidV8(mac.subarray(0, 16));
}

function canonicalIdentity(input: DeriveKeyInput): string {
  if (input.namespace.length === 0) throw new InvalidRequestError('namespace', 'must not be empty');
  if (!Number.isSafeInteger(input.version) || input.version < 0) {
    throw new InvalidRequestError('version', 'must be a non-negative integer');
  }
  for (const [name, value] of Object.entries(input.fields)) {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new InvalidRequestError(`fields.${name}`, 'must be a finite number');
    }
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new InvalidRequestError(`fields.${name}`, 'must be a string, number or boolean');
    }
  }
  const text = canonicalize({
    recipe: 'oncely.key/1',
    namespace: input.namespace,
    version: input.version,
    fields: input.fields,
  });
  if (text === undefined) throw new InvalidRequestError('fields', 'cannot be serialised');
  return text;
}

/** Formats 16 bytes as an RFC 9562 UUIDv8 (custom). */
function uuidV8(bytes: Uint8Array): string {
  return formatUuid(bytes, 8);
}

/**
 * SHA-256 (hex) of the canonical form of method, URL and body. JSON bodies
 * are compared as values, so reordered keys and whitespace do not change the
 * fingerprint; other bodies are compared byte for byte.
 *
 * @param sha256Hex the hash to use; clients pass their runtime's
 *   (`oncely/node` gives Node's synchronous one).
 * @default WebCrypto (`systemRuntime.sha256Hex`)
 * @example
 * const fingerprint = await fingerprintOf('POST', 'https://api.example.com/payments', { encoding: 'json', text: '{"a":1}' });
 * @internal Takes the stored body form; callers read the fingerprint on records and events.
 */
export async function fingerprintOf(
  method: string,
  url: string,
  body: StoredBody | undefined,
  sha256Hex: Runtime['sha256Hex'] = systemRuntime.sha256Hex,
): Promise<string> {
  return sha256Hex(fingerprintText(method, url, body));
}

/**
 * The text hashed: RFC 8785 canonical JSON of `{ method, url, body }`, where
 * `body` is `null` or `{ json: <value> }`, `{ text }` or `{ base64 }`. The
 * wrapper's keys are in their canonical order already (`body`, `method`,
 * `url`), so only its values go through `canonical`: the same text as
 * canonicalising the whole object, without a key sort and a `Set` per key on
 * every request. Never change the text: stored fingerprints must keep matching.
 */
export function fingerprintText(method: string, url: string, body: StoredBody | undefined): string {
  return `{"body":${fingerprintBody(body)},"method":${canonical(method.toUpperCase())},"url":${canonical(url)}}`;
}

function fingerprintBody(body: StoredBody | undefined): string {
  if (body === undefined) return 'null';
  switch (body.encoding) {
    case 'json':
      return `{"json":${canonical(JSON.parse(body.text) as unknown)}}`;
    case 'text':
      return `{"text":${canonical(body.text)}}`;
    case 'base64':
      return `{"base64":${canonical(body.data)}}`;
  }
}

/** Characters that are half of a UTF-16 pair without the other half (`u` mode sees a whole pair as one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * RFC 8785 canonical JSON of JSON data (strings, `JSON.parse` output): byte
 * for byte what `canonicalize` makes of it (test/flow/request/key.test.ts
 * holds them together), without its cases for what JSON data never holds
 * (`toJSON`, `undefined`, cycles), so the send path does not carry it.
 * Refuses what it refuses: a lone surrogate, a number that is not finite
 * (`JSON.parse('1e400')` is `Infinity`).
 */
function canonical(value: unknown): string {
  if (typeof value === 'string' && LONE_SURROGATE.test(value))
    throw new InvalidRequestError('body', 'cannot be fingerprinted: it holds a lone surrogate');
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new InvalidRequestError('body', 'cannot be fingerprinted: it holds a number that is not finite');
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${canonical(key)}:${canonical(object[key])}`)
    .join(',')}}`;
}

function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
}
