/**
 * The connectivity a client uses when the app passes none: what the
 * platform's `navigator.onLine` says, read the only way it can be trusted.
 * `false` is definite (no network interface is up): no attempt is made or
 * counted until the platform fires `online`. `true` means "unknown", never
 * "reachable" (a captive portal, a dead Wi-Fi link still say online), and
 * where there is no `navigator.onLine` at all (Node.js) the answer is always
 * "unknown": attempts go ahead and their own failures tell.
 */
import type { Connectivity } from './engine.js';

/** The part of a global scope this reads: `navigator.onLine` and the `online` event. */
export interface NavigatorScope {
  navigator?: { onLine?: boolean } | undefined;
  addEventListener?: ((type: 'online', listener: () => void) => void) | undefined;
  removeEventListener?: ((type: 'online', listener: () => void) => void) | undefined;
}

/**
 * @param scope where to read `navigator.onLine` and listen for `online`.
 * @default globalThis
 * @example
 * createClient({ connectivity: navigatorConnectivity() }); // what createClient does without one
 */
export function navigatorConnectivity(scope: NavigatorScope = globalThis as NavigatorScope): Connectivity {
  return {
    online: () => scope.navigator?.onLine !== false,
    onOnline(fn) {
      // A listener per call, so one waiting loop unsubscribing never removes another's.
      const listener = (): void => fn();
      scope.addEventListener?.('online', listener);
      return () => scope.removeEventListener?.('online', listener);
    },
  };
}
