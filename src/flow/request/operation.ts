/**
 * flow/request/: what a caller's request becomes before anything is stored
 * or sent: checked, keyed, joined to its base URL, its body as exact bytes.
 * Pure; it imports no other folder of flow/ (only the model, the policy and
 * the runtime), and every later stage reads what it produces.
 *
 * Turning a caller's request into what a new operation record is made of
 * (`create` in flow/decide/transitions.ts makes the record): validate it, fix the
 * exact bytes of the body, keep only headers that are safe at rest, take the
 * key (given, or minted once here and nowhere else) and fingerprint it.
 */
import { InvalidRequestError } from '../../errors.js';
import { CREDENTIAL_HEADERS, STORED_HEADERS, type StoredBody, type StoredRequest } from '../../model.js';
import type { ResolvedPolicy } from '../../options.js';
import type { Runtime } from '../../runtime.js';
import { bytesToBase64 } from './bytes.js';
import { assertValidKey, fingerprintOf } from './key.js';
import { asRequestError, refuse } from './request-problem.js';
import { checkMethod, checkResponseSchema, checkSignal, checkUrl, headerProblem } from './validate.js';

/** What every request may carry, whatever its body. */
export interface OncelyRequestFields<T = unknown> {
  /**
   * Absolute, or joined to the client's `baseUrl` (as ky's `prefixUrl`:
   * `'/payments'` under `'https://api.example.com/v1/'` is `…/v1/payments`).
   */
  url: string | URL;
  /**
   * Headers stored with the operation and sent on every attempt: only
   * `Content-Type`, `Accept`, `Content-Language` and the names the endpoint's
   * `storeHeaders` allows. Anything else (credentials above all) is refused
   * here: supply it with the client's `headers` callback, called for each
   * attempt and never stored.
   */
  headers?: Record<string, string>;
  /**
   * The idempotency key. Give one derived from your business identity (see
   * `deriveKey`) to make repeat sends converge across devices; otherwise a
   * random key is minted once for this operation.
   */
  key?: string;
  /**
   * Aborting ends the operation (`aborted`); a started attempt may still take
   * effect. An AbortSignal (`controller.signal`, not the controller; one
   * from another realm or a polyfill will do): anything else is refused
   * before the operation is stored.
   */
  signal?: AbortSignal;
  /**
   * Validates the 2xx body (any Standard Schema, e.g. a zod >= 3.24 schema;
   * one without `~standard.validate` is refused before anything is stored).
   * A body that fails, or a schema that throws on it, is still a completed
   * operation: it is not retried, its raw result is kept, and `send` rejects
   * with `ResponseValidationError` (a throw is its `cause`).
   */
  responseSchema?: StandardSchemaV1<unknown, T>;
  /** Operations of one scope are sent in order, one at a time. */
  scope?: string;
  /**
   * Write this request ahead even though it sends no idempotency key (a
   * `GET`, or an endpoint with `sendKey: false`), as the endpoint option
   * `persist` does for all its requests. A request that sends a key is
   * always written ahead.
   * @default the endpoint's `persist` (false)
   */
  persist?: boolean;
  /**
   * Plain JSON metadata stored with the operation (e.g. `{ userId }`). A
   * copy is stored; functions, cycles, class instances and more than 32
   * levels are refused.
   */
  meta?: Record<string, unknown>;
  /**
   * A stable reference to this operation, apart from its key, kept on the
   * record and given to the endpoint's `reconcile` hook. Stamp it into the
   * request (Stripe `metadata`, an order id the server stores) so the
   * operation can be found after the provider forgot the key.
   * @default a random uuid minted once, for endpoints with a `reconcile` hook (none otherwise)
   * @example { reference: order.id, json: { amount: 4800, metadata: { order: order.id } } }
   */
  reference?: string;
}

/**
 * A write to send once. A request with a body (`json` or `body`) must name
 * its `method`: a compile error here, and for JavaScript callers an
 * `InvalidRequestError` at run time (oncely does not guess a write's
 * method). `json` and `body` exclude each other.
 *
 * @example
 * await client.send({ method: 'POST', url: '/payments', json: { amount: 4800, currency: 'EUR' } });
 */
export type OncelyRequest<T = unknown> = OncelyRequestFields<T> &
  (
    | {
        /**
         * As with `fetch`: `GET` when not given. A request with a body must
         * name its method (a write says `method: 'POST'`).
         * @default 'GET'
         */
        method?: string;
        json?: undefined;
        body?: undefined;
      }
    | {
        /** Required with a body: oncely does not guess a write's method. @example 'POST' */
        method: string;
        /** A JSON body: serialised once, stored, and resent byte for byte. */
        json: unknown;
        body?: undefined;
      }
    | {
        /** Required with a body: oncely does not guess a write's method. @example 'PUT' */
        method: string;
        json?: undefined;
        /**
         * A raw body (text or bytes), stored and resent byte for byte. Streams,
         * `FormData`, `Blob` and `URLSearchParams` are refused: a stream can be read
         * only once and the others are not bytes yet, so none could be stored for
         * a resend after a crash. Serialise them first (e.g. `params.toString()`
         * with a `Content-Type` header).
         */
        body: string | Uint8Array | ArrayBuffer;
      }
  );

/** The Standard Schema interface (standardschema.dev), implemented by zod, valibot, arktype. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** Header names never written to a record, whatever the options say. */
export const ALWAYS_DENIED_HEADERS: readonly string[] = CREDENTIAL_HEADERS;

export interface PreparedOperation {
  key: string;
  request: StoredRequest;
  fingerprint: string;
  /** A plain-JSON copy of the caller's `meta`. */
  meta?: Record<string, unknown>;
  /** The caller's `reference`, or one minted once. */
  reference?: string;
}

const METHOD = /^[A-Za-z]+$/;

/**
 * The request's method, upper case: as `fetch` does, `GET` when none is
 * given, but a body without a method is refused rather than guessed (a
 * write that became a `GET` would be refused anyway, or worse, sent).
 */
export function methodOf(input: Pick<OncelyRequest, 'method' | 'json' | 'body'>): string {
  if (input.method === undefined) {
    if (input.json !== undefined || input.body !== undefined) {
      throw new InvalidRequestError('method', "a request with a body needs a method, e.g. method: 'POST'");
    }
    return 'GET';
  }
  if (typeof input.method !== 'string' || !METHOD.test(input.method)) {
    throw new InvalidRequestError('method', `"${String(input.method)}" is not an HTTP method`);
  }
  return input.method.toUpperCase();
}

/**
 * Validates the whole request before anything is stored (see validate.ts)
 * and fixes what every attempt will send.
 *
 * @param deniedHeaders credential header names, refused even when `storeHeaders` names them.
 */
export async function prepareOperation(
  input: OncelyRequest<unknown>,
  url: URL,
  policy: ResolvedPolicy,
  deniedHeaders: ReadonlySet<string>,
  runtime: Runtime,
): Promise<PreparedOperation> {
  try {
    return await prepared(input, url, policy, deniedHeaders, runtime);
  } catch (error) {
    // A refused check becomes the caller's InvalidRequestError here, its text loaded only now (request-problem.ts).
    throw await asRequestError(error, runtime);
  }
}

/**
 * optional-parts.ts once loaded: kept, so that each later request takes it
 * without an `import()` of its own (a resolve per call: a few µs in plain
 * Node, hundreds under a loader hook such as a TypeScript runner's). A
 * failed load keeps nothing; the next request loads again.
 */
let optionalParts: typeof import('./optional-parts.js') | undefined;

async function prepared(
  input: OncelyRequest<unknown>,
  url: URL,
  policy: ResolvedPolicy,
  deniedHeaders: ReadonlySet<string>,
  runtime: Runtime,
): Promise<PreparedOperation> {
  const method = methodOf(input);
  if (input.json !== undefined && input.body !== undefined) {
    refuse('body', 'both');
  }
  checkUrl(url);
  // A URL that names a port or carries a query, and `meta`, have more to check: their checks load for them
  // (optional-parts.ts). A load that fails rejects this call, with nothing stored; the next one loads again.
  let parts: typeof optionalParts;
  if (url.port !== '' || url.search !== '' || input.meta !== undefined) {
    optionalParts ??= await runtime.track(import('./optional-parts.js'));
    parts = optionalParts;
  }
  const urlProblem = parts?.urlProblem(url, policy.storeQuery);
  if (urlProblem !== undefined) refuse(...urlProblem);
  const headers = storableHeaders(input.headers ?? {}, deniedHeaders, policy);
  const body = storedBody(input);
  checkMethod(method, body !== undefined);
  checkSignal(input.signal);
  checkResponseSchema(input.responseSchema);
  if (body?.encoding === 'json' && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  let meta: Record<string, unknown> | undefined;
  if (parts !== undefined && input.meta !== undefined) {
    const copied = parts.plainMeta(input.meta);
    if ('problem' in copied) refuse(...copied.problem);
    meta = copied.meta;
  }
  const key = input.key ?? runtime.uuid();
  assertValidKey(key, policy.profile.maxKeyLength);
  // fetch never sends a fragment, and one can hold a secret (`#access_token=…`): it is not stored.
  const href = url.href.replace(/#.*$/, '');
  const request: StoredRequest = { method, url: href, headers };
  if (body !== undefined) request.body = body;
  const prepared: PreparedOperation = {
    key,
    request,
    fingerprint: await fingerprintOf(method, href, body, runtime.sha256Hex),
  };
  if (meta !== undefined) prepared.meta = meta;
  const reference = input.reference;
  if (reference !== undefined && (typeof reference !== 'string' || reference.length === 0 || reference.length > 256)) {
    refuse('reference', 'reference');
  }
  // Minted only where a hook will look it up: other records stay as small as they were.
  if (reference !== undefined || policy.reconcile !== undefined) prepared.reference = reference ?? runtime.uuid();
  return prepared;
}

/**
 * Stored headers are an allow-list: a header can carry a secret under any
 * name, and the store is no place for secrets. Whatever is not listed
 * belongs in the client's `headers` callback, called for every attempt.
 */
function storableHeaders(
  given: Record<string, string>,
  denied: ReadonlySet<string>,
  policy: ResolvedPolicy,
): Record<string, string> {
  if (typeof given !== 'object' || given === null) refuse('headers', 'headers');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const field = `headers.${name}`;
    const lower = name.toLowerCase();
    if (denied.has(lower)) {
      refuse(field, 'secret');
    }
    if (lower === policy.profile.keyHeader.toLowerCase()) {
      refuse(field, 'keyHeader');
    }
    const problem = headerProblem(name, value);
    if (problem !== undefined) throw new InvalidRequestError(field, problem);
    if (!STORED_HEADERS.includes(lower) && !policy.storeHeaders.includes(lower)) {
      refuse(field, 'unstored', STORED_HEADERS.join(', '));
    }
    headers[lower] = value;
  }
  return headers;
}

function storedBody(input: OncelyRequest<unknown>): StoredBody | undefined {
  if (input.json !== undefined) {
    let text: string | undefined;
    try {
      text = JSON.stringify(input.json);
    } catch (error) {
      refuse('json', 'serialise', `: ${(error as Error).message}`);
    }
    if (text === undefined) return refuse('json', 'serialise');
    return { encoding: 'json', text };
  }
  const body = input.body;
  if (body === undefined) return undefined;
  if (typeof body === 'string') return { encoding: 'text', text: body };
  if (body instanceof Uint8Array) return { encoding: 'base64', data: bytesToBase64(body) };
  if (body instanceof ArrayBuffer) return { encoding: 'base64', data: bytesToBase64(new Uint8Array(body)) };
  return refuse('body', 'bodyKind', kindOf(body));
}

function kindOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value;
  return (value as object).constructor?.name ?? 'object';
}
