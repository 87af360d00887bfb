/**
 * A store that fails before anything is sent (a full disk, a store closed
 * under the client): the caller gets an oncely error with a code and the
 * key, saying that nothing was sent, so it tries again under the same key
 * rather than treating the operation as lost (or minting a new one).
 */
import { isOncelyError, OncelyError } from '../../errors.js';

/** The store failed before anything was sent; `cause` is the store's own error. */
export class StoreUnavailableError extends OncelyError {
  override name = 'StoreUnavailableError' as const;
  declare readonly code: 'store_unavailable';
  constructor(key: string | undefined, cause: unknown) {
    super('store_unavailable', `Nothing was sent: the store failed (${String(cause)})`, { key, cause });
  }
}

/**
 * `work`, which sends nothing, with a failure that is not already an oncely
 * error reported as `StoreUnavailableError`. Only for store calls made
 * before any attempt of the operation could have left.
 */
export function beforeSending<T>(key: string | undefined, work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => {
    throw isOncelyError(error) ? error : new StoreUnavailableError(key, error);
  });
}
