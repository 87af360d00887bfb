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
import type { Runtime } from '../../runtime.js';
import { endLast } from '../decide/attempt-history.js';
import { countsTowardMaxAttempts, mayHaveTakenEffect } from '../decide/decide.js';
import { revise } from '../decide/revise.js';
import { leaseUntil } from '../decide/transitions.js';
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

let loading: Promise<NextStep> | undefined;
/** The module, once loaded: a prefetch has nothing left to do, and the loop uses it without awaiting. */
let loaded: NextStep | undefined;

export function loadNextStep(runtime: Pick<Runtime, 'track'>): Promise<NextStep> {
  loading ??= import('./next-step.js').then(
    (module) => {
      loaded = module;
      return module;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return runtime.track(loading);
}

/**
 * The module if it is loaded. The loop takes it from here before awaiting a
 * load: an await, even of a settled promise, hands the turn to every other
 * operation, and answers that came together would be handled out of order
 * (a 503 behind a 201 that came after it), changing what the host's gate
 * hears and in which order the retry delays are drawn.
 */
export function loadedNextStep(): NextStep | undefined {
  return loaded;
}

/** Starts the load if nothing has yet; a failure is left for the next caller to meet (and retry). */
export function prefetchNextStep(runtime: Pick<Runtime, 'track'>): void {
  if (loaded !== undefined) return;
  loadNextStep(runtime).catch(() => undefined);
}
