/**
 * What the resume pass's chunk (flow/calls/resume-pass.ts and the modules
 * only it imports: claim-pass.ts, drive-list.ts, the pass's pieces of
 * resume.ts) uses of the client's own code, handed to it by the client
 * instead of imported, as reconciliation's is (reconcile-kit.ts): a chunk
 * loaded later that imports modules the page already has makes a bundler
 * split them into shared chunks, more files and more bytes before the
 * first send (issue 33). The chunk imports only this module's type.
 */
import { isTerminal, writeOrder } from '../../model.js';
import { packedListings } from '../../store/packed-listing.js';
import { policyOfRecord } from '../decide/policy-snapshot.js';
import { pause } from '../drive/pause.js';
import { mayStartNow } from '../drive/start-at-once.js';
import { attemptTimeoutMs } from '../transport/timeouts.js';
import { emptySummary, summaries } from './resume.js';
import { guarded, outcomeOf } from './settle.js';
import { isHeldElsewhere, liveProfile } from './settle-errors.js';

export const RESUME_KIT = {
  isTerminal,
  writeOrder,
  policyOfRecord,
  mayStartNow,
  pause,
  attemptTimeoutMs,
  emptySummary,
  summaries,
  packedListings,
  guarded,
  outcomeOf,
  isHeldElsewhere,
  liveProfile,
};

export type ResumeKit = typeof RESUME_KIT;
