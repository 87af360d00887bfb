/**
 * next-step.ts (and flow/decide/next-step.ts with it), loaded with `import()` once an attempt has
 * answered: in the background after a plain success (see
 * flow/decide/plain-success.ts), so that the page's first send never waits
 * for it and a failure later, offline too, finds it loaded; awaited by the
 * first attempt that does not simply succeed if it is not loaded by then.
 * One load is shared by every loop; a failed one (a chunk the page could not
 * fetch) is tried again by the next caller. Each wait is reported to the
 * caller's runtime as real work, so a virtual clock never runs ahead of it.
 */
import { endLast } from '../decide/attempt-history.js';
import { countsTowardMaxAttempts, mayHaveTakenEffect } from '../decide/decide.js';
import { revise } from '../decide/revise.js';
import { leaseUntil } from '../decide/transitions.js';
import { chunk } from './chunk.js';
import { reportToGate } from './gating.js';
import { describe, emitEnded } from './outcome.js';
import { pause } from './pause.js';

export type NextStep = typeof import('./next-step.js');

/** What next-step.ts uses of the loop's modules, handed to it (it imports only types: no chunk shared with the client). */
export const NEXT_STEP_KIT = {
  pause,
  mayHaveTakenEffect,
  countsTowardMaxAttempts,
  revise,
  endLast,
  leaseUntil,
  emitEnded,
  describe,
  reportToGate,
};
export type NextStepKit = typeof NEXT_STEP_KIT;

const nextStep = chunk<NextStep>(() => import('./next-step.js'));

/** The module, loading it if no load is under way (shared by every loop; a failed load is tried again). */
export const loadNextStep = nextStep.load;
/** The module if it is loaded: the loop takes it from here without an await (see chunk.ts). */
export const loadedNextStep = nextStep.loaded;
/** Starts the load if nothing has yet; a failure is left for the next caller to meet (and retry). */
export const prefetchNextStep = nextStep.prefetch;
