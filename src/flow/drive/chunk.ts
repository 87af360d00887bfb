/**
 * A part of the loop kept in a chunk of its own and loaded with `import()`
 * on first need (next-step-load.ts, later-round-load.ts). One load is shared
 * by every loop; a failed one (a chunk the page could not fetch) is tried
 * again by the next caller. Each wait is reported to the caller's runtime as
 * real work, so a virtual clock never runs ahead of it.
 *
 * Once loaded, the module is at hand without an await (`loaded`): an await,
 * even of a settled promise, hands the turn to every other operation, and
 * answers that came together would be handled out of order (a 503 behind a
 * 201 that came after it), changing what the host's gate hears and in which
 * order the retry delays are drawn.
 *
 * @example
 * const nextStep = chunk(() => import('./next-step.js'));
 * const step = nextStep.loaded() ?? (await nextStep.load(runtime));
 */
import type { Runtime } from '../../runtime.js';

export interface Chunk<T> {
  /** The module, loading it if no load is under way. */
  load(runtime: Pick<Runtime, 'track'>): Promise<T>;
  /** The module if it is loaded; `undefined` before. */
  loaded(): T | undefined;
  /** Starts the load if nothing has yet; a failure is left for the next caller to meet (and retry). */
  prefetch(runtime: Pick<Runtime, 'track'>): void;
}

export function chunk<T>(importModule: () => Promise<T>): Chunk<T> {
  let loading: Promise<T> | undefined;
  let loaded: T | undefined;
  const load = (runtime: Pick<Runtime, 'track'>): Promise<T> => {
    loading ??= importModule().then(
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
  };
  return {
    load,
    loaded: () => loaded,
    prefetch: (runtime) => {
      if (loaded === undefined) load(runtime).catch(() => undefined);
    },
  };
}
