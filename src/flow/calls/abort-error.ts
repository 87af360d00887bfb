/**
 * An operation stopped by the caller's own signal rejects the way `fetch`
 * and ky do: with a `DOMException` named `AbortError` (or `TimeoutError`
 * when the signal's reason is one, as `AbortSignal.timeout()`'s is), so the
 * check every fetch user already writes (`error.name === 'AbortError'`) works. The
 * oncely error it replaces is its `cause`, and its fields (`key`, `state`,
 * `mayHaveTakenEffect`, `remediation`, …) are copied onto it, because an
 * abort after an attempt left may still have taken effect: a caller must
 * learn that without unwrapping. It carries the oncely brand, so
 * `isOncelyError` and `hasErrorCode(e, 'operation_failed')` keep answering
 * yes; only `instanceof OperationError` does not (that is `e.cause`).
 * Its `code` is oncely's (`'operation_failed'`), shadowing the legacy
 * numeric `DOMException.code` (20): `name` is what the platform checks.
 *
 * Loaded with `import()` by caller-abort.ts, which decides whether an error
 * is such an abort: only an aborted call needs this. It imports only types.
 */
import type { OperationAbortError, OperationError } from '../../errors.js';

/** The registry symbol errors.ts brands every oncely error with (`Symbol.for` gives the same one in any bundle copy). */
const BRAND = Symbol.for('oncely.error');

export type { OperationAbortError } from '../../errors.js';

/** The caller's `AbortError` (or `TimeoutError`, by the signal's `reason`) for an operation its abort stopped. */
export function callerAbortError(error: OperationError, reason: unknown): OperationAbortError {
  return abortErrorFrom(error, nameOf(reason));
}

/**
 * The name fetch rejects with for this reason: `AbortSignal.timeout()`
 * aborts with a `TimeoutError` and fetch rejects with it as it is, so a
 * caller's `error.name === 'TimeoutError'` check must see it here too. Any
 * other reason (none, a string, a custom error) is an `AbortError`.
 */
function nameOf(reason: unknown): 'AbortError' | 'TimeoutError' {
  return (reason as { name?: unknown } | null)?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError';
}

function abortErrorFrom(error: OperationError, name: 'AbortError' | 'TimeoutError'): OperationAbortError {
  const abort = new DOMException(error.message, name);
  const fields = error as unknown as Record<string, unknown>;
  for (const name of Object.keys(fields)) {
    if (name !== 'name' && name !== 'message' && name !== 'stack') define(abort, name, fields[name]);
  }
  define(abort, 'cause', error);
  define(abort, BRAND, true);
  return abort as unknown as OperationAbortError;
}

function define(target: object, name: PropertyKey, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: typeof name === 'string', configurable: true });
}
