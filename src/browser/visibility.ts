/**
 * The page becoming visible: a user is back, so the client looks for due
 * work and a wiped database at once instead of at the next periodic pass.
 * A DOM source, kept out of the drain loop (a service worker has no page).
 */
import type { BrowserEnv } from './env.js';

/** Calls `fn` each time `document` turns visible. Returns an unsubscribe. */
export function onVisible(document: BrowserEnv['document'], fn: () => void): () => void {
  if (document === undefined) return () => undefined;
  const listener = (): void => {
    if (document.visibilityState === 'visible') fn();
  };
  document.addEventListener('visibilitychange', listener);
  return () => document.removeEventListener('visibilitychange', listener);
}
