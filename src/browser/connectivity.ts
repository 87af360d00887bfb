/**
 * Connectivity for the browser: `navigator.onLine` plus what the attempts
 * themselves tell us.
 *
 * `navigator.onLine === false` is trustworthy: the core loop makes no
 * attempt (and counts none) while it holds. `true` is not: a captive
 * portal or a dead Wi-Fi link still says online. So an attempt that could
 * not be sent (`not_sent`), or that failed in the transport without any
 * HTTP answer, also pauses the client ("suspect"). It resumes on the first
 * of: the browser's `online` event, the page becoming visible, or
 * `recheckMs` passing, and then tries once more (a failure pauses again).
 * While paused, operations wait without burning attempts or retry budget;
 * only their deadline runs.
 */
import type { Connectivity } from '../flow/drive/run.js';
import type { Runtime } from '../runtime.js';
import type { BrowserEnv } from './env.js';
import type { ConnectivityReason } from './events.js';

export interface BrowserConnectivity extends Connectivity {
  /** An attempt could not reach the network: pause until online, visible, or the recheck. */
  reportUnreachable(reason: 'not_sent' | 'transport_error'): void;
  /** Called on every change of `online()`. Returns an unsubscribe. */
  onChange(fn: (online: boolean, reason: ConnectivityReason) => void): () => void;
  dispose(): void;
}

export interface BrowserConnectivityOptions {
  env: BrowserEnv;
  runtime: Pick<Runtime, 'sleep'>;
  /** After an unreachable attempt, try again this much later even without an `online` event. */
  recheckMs: number;
}

export function browserConnectivity(options: BrowserConnectivityOptions): BrowserConnectivity {
  const { env, runtime, recheckMs } = options;
  const wakers = new Set<() => void>();
  const changes = new Set<(online: boolean, reason: ConnectivityReason) => void>();
  let suspect = false;
  let recheck: AbortController | undefined;
  let last: boolean | undefined;

  const browserOnline = (): boolean => env.navigator?.onLine !== false;
  const online = (): boolean => browserOnline() && !suspect;

  function announce(reason: ConnectivityReason): void {
    const now = online();
    if (now !== last) {
      last = now;
      for (const fn of [...changes]) fn(now, reason);
    }
    if (now) for (const fn of [...wakers]) fn();
  }

  /** Leaves the suspect state (if in it) and wakes waiting loops. */
  function trust(reason: ConnectivityReason): void {
    suspect = false;
    recheck?.abort();
    recheck = undefined;
    announce(reason);
  }

  const onOnline = (): void => trust('online');
  const onOffline = (): void => announce('offline');
  const onVisibility = (): void => {
    if (env.document?.visibilityState === 'visible' && suspect) trust('visible');
  };
  env.window?.addEventListener('online', onOnline);
  env.window?.addEventListener('offline', onOffline);
  env.document?.addEventListener('visibilitychange', onVisibility);
  last = online();

  return {
    online,
    onOnline(fn) {
      wakers.add(fn);
      return () => wakers.delete(fn);
    },
    onChange(fn) {
      changes.add(fn);
      return () => changes.delete(fn);
    },
    reportUnreachable(reason) {
      if (suspect) return;
      suspect = true;
      announce(reason);
      const timer = new AbortController();
      recheck = timer;
      runtime.sleep(recheckMs, timer.signal).then(
        () => {
          if (recheck === timer) trust('recheck');
        },
        () => undefined,
      );
    },
    dispose() {
      recheck?.abort();
      env.window?.removeEventListener('online', onOnline);
      env.window?.removeEventListener('offline', onOffline);
      env.document?.removeEventListener('visibilitychange', onVisibility);
      wakers.clear();
      changes.clear();
    },
  };
}
