/**
 * "Look for due work now", fired by whatever the host context hears (a
 * tab's kick or change message, the page becoming visible) and heard by the
 * drain loop as its `wake` source. The indirection keeps the drain loop free
 * of DOM events and tab messages, so a service worker can feed it its own.
 */
import type { WakeSource } from './drain-loop.js';

export class Hints {
  readonly #listeners = new Set<() => void>();

  /** Subscribe here (pass as the drain loop's `wake`). */
  readonly source: WakeSource = (fn) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  fire(): void {
    for (const fn of [...this.#listeners]) fn();
  }
}
