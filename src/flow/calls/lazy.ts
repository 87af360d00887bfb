/**
 * A module loaded on first use with `import()`, to keep it off an app's
 * start-up path. One load is shared by every caller (so calls made while it
 * loads keep their order), a failed load is tried again by the next caller
 * (a chunk that could not be fetched: a page that went offline before it
 * arrived), and the load is reported to the runtime as real work
 * (`Runtime.track`), so a test's virtual clock never runs ahead of it.
 *
 * @example
 * const liveView = lazy(() => import('./subscribe.js'), runtime);
 * const { LiveView } = await liveView();
 */
import type { Runtime } from '../../runtime.js';

export function lazy<T>(load: () => Promise<T>, runtime: Pick<Runtime, 'track'>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= runtime.track(load()).catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
