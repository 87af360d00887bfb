/**
 * The client's "stop driving" switch. Not an AbortSignal: hundreds of
 * operations wait at once, and one listener each on a shared, long-lived
 * signal trips Node's MaxListeners warning (and, with `AbortSignal.any`,
 * retains memory per call on Node 20). A plain set of callbacks does not.
 */
export class Shutdown {
  #stopped = false;
  readonly #listeners = new Set<() => void>();

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Calls `fn` once when the client stops. Returns an unsubscribe. */
  onStop(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const fn of [...this.#listeners]) fn();
    this.#listeners.clear();
  }
}
