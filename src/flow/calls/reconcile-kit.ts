/**
 * What reconciliation's chunk (flow/calls/reconcile.ts and the modules only
 * it imports, loaded with `import()` when an operation is first reconciled)
 * uses of the client's own code, handed to it by the client instead of
 * imported. A chunk loaded later that imports modules the page already has
 * makes a bundler split those modules, and everything else both use, into
 * shared chunks of their own: more files and more bytes before the first
 * send (issue 33). The chunk imports only this module's type.
 */
import { InvalidRequestError, InvalidStateError, NotFoundError } from '../../errors.js';
import { CREDENTIAL_HEADERS } from '../../model.js';
import { liveRule, policyOfRecord } from '../decide/policy-snapshot.js';
import { revise } from '../decide/revise.js';
import { describe } from '../drive/outcome.js';
import { pause } from '../drive/pause.js';
import { guarded, outcomeOf } from './settle.js';
import { liveProfile } from './settle-errors.js';
import { beforeSending } from './store-failure.js';

export const RECONCILE_KIT = {
  InvalidRequestError,
  InvalidStateError,
  NotFoundError,
  CREDENTIAL_HEADERS,
  liveRule,
  policyOfRecord,
  revise,
  describe,
  pause,
  guarded,
  outcomeOf,
  liveProfile,
  beforeSending,
};

export type ReconcileKit = typeof RECONCILE_KIT;
