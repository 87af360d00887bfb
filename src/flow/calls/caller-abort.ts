/**
 * Whether an error is the caller's own abort (its signal aborted, and the
 * operation stopped for it), and then the `AbortError` fetch would reject
 * with (abort-error.ts, loaded with `import()`: only an aborted call needs
 * it). If it cannot be loaded (a chunk the page could not fetch), the call
 * rejects with the oncely error itself, which says the same: stopped by the
 * caller's abort, and whether it may have taken effect.
 */
import { isOncelyError, type OperationError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';

export type { OperationAbortError } from '../../errors.js';

/** `error` as the caller's `AbortError` when `signal` aborted and `error` says the abort stopped the operation; else `error`. */
export async function asCallerAbort(
  error: unknown,
  signal: AbortSignal | undefined,
  runtime: Pick<Runtime, 'track'>,
): Promise<unknown> {
  if (signal?.aborted !== true || !isOncelyError(error)) return error;
  if (error.code !== 'operation_failed' || error.reason !== 'aborted') return error;
  try {
    const { callerAbortError } = await runtime.track(import('./abort-error.js'));
    return callerAbortError(error as OperationError, signal.reason);
  } catch {
    return error;
  }
}
