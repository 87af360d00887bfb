import type { Ledger, LedgerEntry } from './types.js';

/**
 * The server's record of what happened. Tests read it through the `Ledger`
 * interface; only the server writes to it. Collections are cleared in place
 * so a reference a test captured before `reset()` stays live.
 */
export class LedgerRecorder implements Ledger {
  readonly #requests: LedgerEntry[] = [];
  readonly #effects = new Map<string, number>();
  readonly #inFlight = new Map<string, number>();
  readonly #maxInFlight = new Map<string, number>();
  #keylessEffects = 0;

  get requests(): readonly LedgerEntry[] {
    return this.#requests;
  }

  get effects(): ReadonlyMap<string, number> {
    return this.#effects;
  }

  effectCount(key: string): number {
    return this.#effects.get(key) ?? 0;
  }

  totalEffects(): number {
    let total = this.#keylessEffects;
    for (const count of this.#effects.values()) total += count;
    return total;
  }

  maxConcurrent(key?: string): number {
    if (key !== undefined) return this.#maxInFlight.get(key) ?? 0;
    let max = 0;
    for (const count of this.#maxInFlight.values()) max = Math.max(max, count);
    return max;
  }

  requestsFor(key: string): LedgerEntry[] {
    return this.#requests.filter((entry) => entry.key === key);
  }

  record(entry: LedgerEntry): void {
    this.#requests.push(entry);
  }

  countEffect(key: string | undefined): void {
    if (key === undefined) {
      this.#keylessEffects += 1;
      return;
    }
    this.#effects.set(key, this.effectCount(key) + 1);
  }

  /**
   * Marks a keyed request as in flight and returns the function that ends it.
   * The returned function is idempotent because both "response finished" and
   * "socket closed" may report the end of the same request.
   */
  enterFlight(key: string): () => void {
    const current = (this.#inFlight.get(key) ?? 0) + 1;
    this.#inFlight.set(key, current);
    if (current > (this.#maxInFlight.get(key) ?? 0)) this.#maxInFlight.set(key, current);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const remaining = (this.#inFlight.get(key) ?? 1) - 1;
      if (remaining > 0) this.#inFlight.set(key, remaining);
      else this.#inFlight.delete(key);
    };
  }

  /** In-flight counts survive a reset: those requests are still open. */
  clear(): void {
    this.#requests.length = 0;
    this.#effects.clear();
    this.#maxInFlight.clear();
    this.#keylessEffects = 0;
  }
}
