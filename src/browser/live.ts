/**
 * The browser client's live view, wired: loaded with `import()` when the app
 * first subscribes (a page that never shows the queue never loads it, and
 * until then there is nobody to refresh), then refreshed on every change
 * the client sees.
 */
import { lazy } from '../flow/calls/lazy.js';
import type { Runtime } from '../runtime.js';
import type { LiveView, LiveViewOptions, SubscribeOptions, Subscriber } from './subscribe.js';

export interface LiveSubscriptions {
  /** `BrowserClient.subscribe`: whose operations is decided at the call, not when the view has loaded. */
  subscribe(fn: Subscriber, options?: SubscribeOptions): () => void;
  /** Tells the view to look again; nothing before anyone subscribed. */
  refresh(): void;
}

export function liveSubscriptions(options: LiveViewOptions, runtime: Pick<Runtime, 'track'>): LiveSubscriptions {
  let live: LiveView | undefined;
  const liveView = lazy(async () => {
    const { LiveView } = await import('./subscribe.js');
    live = new LiveView(options);
    return live;
  }, runtime);
  return {
    subscribe(fn, subscribeOptions = {}) {
      const resolved =
        'userId' in subscribeOptions ? subscribeOptions : { ...subscribeOptions, userId: options.currentUser() };
      let unsubscribe: (() => void) | undefined;
      let cancelled = false;
      liveView().then((view) => {
        if (!cancelled) unsubscribe = view.subscribe(fn, resolved);
      }, options.onError);
      return () => {
        cancelled = true;
        unsubscribe?.();
      };
    },
    refresh: () => void live?.refresh(),
  };
}
