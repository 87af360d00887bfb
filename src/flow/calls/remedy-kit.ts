/**
 * What the chunk of `retry` and `discard` (flow/calls/remedies.ts, loaded
 * with `import()` on the first of them) uses of the client's own code,
 * handed to it instead of imported, as reconciliation's is
 * (reconcile-kit.ts): a chunk loaded later that imports modules the page
 * already has makes a bundler split them into shared chunks, more bytes
 * before the first send (issue 33). The chunk imports only this module's type.
 */
import { InvalidStateError, NotFoundError } from '../../errors.js';
import { isTerminal } from '../../model.js';
import { mayHaveTakenEffect } from '../decide/decide.js';
import { policyOfRecord } from '../decide/policy-snapshot.js';
import { reopen } from '../decide/transitions.js';
import { guarded, outcomeOf } from './settle.js';
import { liveProfile } from './settle-errors.js';
import { beforeSending } from './store-failure.js';

export const REMEDY_KIT = {
  InvalidStateError,
  NotFoundError,
  isTerminal,
  mayHaveTakenEffect,
  policyOfRecord,
  reopen,
  guarded,
  outcomeOf,
  liveProfile,
  beforeSending,
};

export type RemedyKit = typeof REMEDY_KIT;
