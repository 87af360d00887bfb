/**
 * One listener per caller signal, fanned out to every operation waiting on
 * it. Apps share one signal across many sends (a page's "cancel all"); one
 * listener per waiting operation on that signal trips Node's MaxListeners
 * warning past ten, though nothing leaks.
 */
const fanouts = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` when `signal` aborts. Returns an unsubscribe. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let callbacks = fanouts.get(signal);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    fanouts.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const callback of [...set]) callback();
        set.clear();
      },
      { once: true },
    );
  }
  const set = callbacks;
  set.add(fn);
  return () => set.delete(fn);
}
