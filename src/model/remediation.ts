/** The default next step of each error code (see `OncelyError.remediation`). */
import type { OncelyErrorCode } from '../errors.js';

/** Codes only the file store raises: its errors carry their own next step (store/file/), kept out of a browser bundle. */
export type FileStoreErrorCode = 'lock_timeout' | 'store_owned';

/**
 * The next step for each code, when the raiser has nothing more specific.
 * Every oncely error carries one, so a catch-all handler can always show it.
 * A code added without its line (or to `FileStoreErrorCode`) fails to compile.
 */
export const DEFAULT_REMEDIATION: Readonly<Record<Exclude<OncelyErrorCode, FileStoreErrorCode>, string>> = {
  invalid_options: 'Fix the option named in `field`; nothing was sent or stored.',
  invalid_request: 'Fix the request field named in `field`; nothing was sent or stored.',
  key_conflict: 'Use a new key for new work, or resend the original request unchanged.',
  operation_failed: 'Inspect it with get(key) and follow its failure remediation.',
  response_invalid: 'The server completed it: do not send it again. Read `result`; fix the response schema.',
  lease_lost: 'Another owner finishes it: wait for its outcome (get(key), `settled`), do not resend.',
  not_found: 'Check the key: never stored here, or swept after its retention.',
  store_corrupt: 'The record was moved aside, not deleted: see quarantined().',
  response_parse: 'The server completed it: do not send it again. Its body is on `text`.',
  store_unavailable: 'Nothing was sent. Fix the store (see `cause`), then try again with the same key.',
  invalid_state: 'Check it with get(key): if in flight, wait for it to settle; if the client closed, create one.',
};

export const GENERIC_REMEDIATION = 'Read the message; if it names an operation, inspect it with get(key).';

/** The next step of an operation that could not be driven and stays stored, when nothing more specific is known. */
export const STORED_REMEDIATION =
  'It stays stored: get(key) shows it; resume() it once the cause is fixed. Do not send it again under a new key.';
