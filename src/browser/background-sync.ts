/**
 * Asks the browser to wake the app's service worker when the network is
 * back (Background Sync), so an operation queued in a page still goes out
 * after its last tab closed. The page asks when it writes an operation
 * ahead while offline, and when an attempt could not leave (`not_sent`).
 *
 * Only a hint: Chromium fires `sync`; Firefox, Safari, Android WebView and
 * Brave have no Background Sync, and there pages drain on load, `online`
 * and visibility as before. A browser without it, a page without a
 * service worker, or a refused registration cost nothing but this call.
 */
import type { NavigatorLike } from './env.js';

export interface BackgroundSync {
  /** Registers the tag (once at a time: requests while one is under way share it). */
  request(): void;
}

export function backgroundSync(
  navigator: NavigatorLike | undefined,
  tag: string,
  onError: (error: unknown) => void,
): BackgroundSync {
  let asking = false;
  return {
    request() {
      const container = navigator?.serviceWorker;
      if (asking || container === undefined) return;
      asking = true;
      // `ready` never settles on a page whose app registered no worker: nothing waits on it.
      container.ready
        .then((registration) => registration.sync?.register(tag))
        .catch(onError)
        .finally(() => {
          asking = false;
        });
    },
  };
}
