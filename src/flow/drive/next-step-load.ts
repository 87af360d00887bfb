/**
 * flow/decide/next-step.ts, loaded with `import()` the first time an attempt
 * does not simply succeed (see flow/decide/plain-success.ts). One load is
 * shared by every loop; a failed one (a chunk the page could not fetch) is
 * tried again by the next attempt that needs it. Each wait is reported to
 * the caller's runtime as real work, so a virtual clock never runs ahead of it.
 */
import type { Runtime } from '../../runtime.js';

export type NextStep = typeof import('../decide/next-step.js');

let loading: Promise<NextStep> | undefined;

export function loadNextStep(runtime: Pick<Runtime, 'track'>): Promise<NextStep> {
  loading ??= import('../decide/next-step.js').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return runtime.track(loading);
}
