/**
 * later-round.ts, loaded with `import()` by the first round that waits for a
 * retry's time, calls the `headers` callback or meets `onUnauthorized`; in
 * the background after a first answer
 * (beside the next step, next-step-load.ts), and at once by a client with a
 * `headers` callback (its every attempt needs it). One load is shared by
 * every loop; a failed one (a chunk the page could not fetch) is tried again
 * by the next caller. Each wait is reported to the caller's runtime as real
 * work, so a virtual clock never runs ahead of it.
 */
import { MAX_KEPT_ATTEMPTS } from '../decide/attempt-history.js';
import { countsTowardMaxAttempts, mayHaveTakenEffect } from '../decide/decide.js';
import { policyOfRecord } from '../decide/policy-snapshot.js';
import { CLAIM_KIT, startAttempt } from '../decide/transitions.js';
import { leaseBoundMs, TAKEOVER_MARGIN_MS } from '../engine/lease-watch.js';
import { chunk } from './chunk.js';
import { waitForOnline } from './first-look.js';
import { mayAttemptNow } from './may-attempt.js';
import { loadedNextStep, loadNextStep, NEXT_STEP_KIT } from './next-step-load.js';
import { pause } from './pause.js';
import { startAtOnce } from './start-at-once.js';

export type LaterRound = typeof import('./later-round.js');

/** What later-round.ts uses of the loop's modules, handed to it (it imports only types). */
export const LATER_ROUND_KIT = {
  pause,
  mayAttemptNow,
  waitForOnline,
  loadedNextStep,
  loadNextStep,
  NEXT_STEP_KIT,
  CLAIM_KIT,
  startAttempt,
  leaseBoundMs,
  TAKEOVER_MARGIN_MS,
  policyOfRecord,
  startAtOnce,
  countsTowardMaxAttempts,
  mayHaveTakenEffect,
  MAX_KEPT_ATTEMPTS,
};
export type LaterRoundKit = typeof LATER_ROUND_KIT;

const laterRound = chunk<LaterRound>(() => import('./later-round.js'));

/** The module, loading it if no load is under way (shared by every loop; a failed load is tried again). */
export const loadLaterRound = laterRound.load;
/** The module if it is loaded: the loop takes it from here without an await (see chunk.ts). */
export const loadedLaterRound = laterRound.loaded;
/** Starts the load if nothing has yet; a failure is left for the next caller to meet (and retry). */
export const prefetchLaterRound = laterRound.prefetch;
