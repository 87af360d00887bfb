/** The default next step of each error code (see `OncelyError.remediation`). */
import type { OncelyErrorCode } from '../errors.js';

/**
 * The next step for each code, when the raiser has nothing more specific.
 * Every oncely error carries one, so a catch-all handler can always show it.
 * A code added without its line fails to compile.
 */
export const DEFAULT_REMEDIATION: Readonly<Record<OncelyErrorCode, string>> = {
  invalid_options:
    'Fix the option named in `field` (the message lists the accepted forms); nothing was sent or stored.',
  invalid_request: 'Fix the request field named in `field`; nothing was sent or stored.',
  key_conflict: 'Use a new key for new work, or resend the original request unchanged under this key.',
  operation_failed: 'Inspect the operation with get(key) and follow its failure remediation.',
  response_invalid:
    'The server completed the operation: do not send it again. Read the raw answer from `result` and fix the response schema or reconcile the data.',
  lease_lost:
    'Another owner finishes this operation; wait for its outcome (get(key) or the settled event) instead of resending.',
  not_found: 'Check the key: the operation was never stored here, or was swept after its retention.',
  store_corrupt:
    'The record was moved aside, not deleted: inspect it with quarantined() (or `oncely list --state quarantined`).',
  response_parse:
    'The server completed the operation: do not send it again. Its body is on `text`; reconcile by hand or fix the server or the content type.',
  lock_timeout:
    'Nothing was written: check what the process holding the record is doing, then try again, or raise `lockTimeoutMs`.',
  store_owned:
    'Nothing was read or written: another process owns this file store directory (`exclusive: true`). Go through that process, or stop it, then try again.',
  store_unavailable: 'Nothing was sent. Fix the store (see `cause`), then try again with the same key.',
  invalid_state:
    'Check the operation with get(key): the message says which states allow this (in flight: wait for it to settle; a closed client: create a new one).',
};

export const GENERIC_REMEDIATION =
  'Read the message; if an operation is named, inspect it with get(key) before anything else.';
