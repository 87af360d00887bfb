/**
 * The release of held operations after one success proved their host is
 * back (the gate's `half-open` mode, policy/gate.ts): a slow start. A few go
 * at once; then, every step (`rampMs / RAMP_STEPS`, 25 ms by default),
 * twice as many as before may have gone, provided half of those released so
 * far have succeeded. A host that serves well has 200 operations back in
 * about 125 ms instead of a fixed spread; one only half back (slow, or
 * turning some away) stops the doubling: slow answers hold it, and the
 * first failure opens the gate again before the next step is sent.
 *
 * Why not everyone at once once the first few succeed: a host that came
 * back with less capacity answers a few well and the rest of a burst badly.
 * Why not a fixed spread alone: it makes every recovery `rampMs` longer,
 * however well the host serves. The fixed spread stays as a floor, so the
 * ramp never takes longer than `rampMs`: the `n`-th operation in line goes
 * no later than `n / held × rampMs` after the proof.
 *
 * Pure bookkeeping on the time it is given, like the gate.
 */

/** Operations released at once by the proof (the probe's success). */
export const RAMP_FIRST = 8;
/** The doubling's pace: `rampMs` is this many steps. */
export const RAMP_STEPS = 20;

/** @internal */
export class Ramp {
  readonly #startAt: number;
  readonly #endAt: number;
  readonly #stepMs: number;
  /** The floor's spacing: the held at the proof spread over `rampMs`. */
  readonly #slotMs: number;
  /** Place in line of each operation waiting, given in order of first asking (kept until the ramp ends). */
  readonly #place = new Map<string, number>();
  #nextPlace = 0;
  /** Operations whose place is below this may go now. */
  #window = RAMP_FIRST;
  #widenedAt: number;
  #released = 0;
  #succeeded = 0;

  constructor(startAtMs: number, rampMs: number, heldAtProof: number) {
    this.#startAt = startAtMs;
    this.#widenedAt = startAtMs;
    this.#endAt = startAtMs + rampMs;
    this.#stepMs = rampMs / RAMP_STEPS;
    this.#slotMs = rampMs / Math.max(1, heldAtProof);
  }

  /** The floor is over: everyone may go. */
  over(nowMs: number): boolean {
    return nowMs >= this.#endAt;
  }

  /**
   * May operation `id` go now (`undefined`)? If not, the time to ask again:
   * the next step or its place on the floor, whichever is first (or sooner,
   * when told the window widened).
   */
  ask(id: string, nowMs: number): number | undefined {
    this.#widen(nowMs);
    let place = this.#place.get(id);
    if (place === undefined) {
      place = this.#nextPlace++;
      this.#place.set(id, place);
    }
    const floorAt = Math.min(this.#endAt, Math.round(this.#startAt + place * this.#slotMs));
    if (place < this.#window || nowMs >= floorAt) {
      this.#place.delete(id);
      this.#released += 1;
      return undefined;
    }
    // The next step, if it is still to come; past it the window waits for successes, which tell the held.
    const stepAt = Math.ceil(this.#widenedAt + this.#stepMs);
    return stepAt > nowMs ? Math.min(floorAt, stepAt) : floorAt;
  }

  /** A success since the proof. Returns `true` when it widened the window: the held should ask again. */
  success(nowMs: number): boolean {
    this.#succeeded += 1;
    return this.#widen(nowMs);
  }

  /** Everyone released has answered well: nothing of the ramp is in flight. */
  settled(): boolean {
    return this.#succeeded >= this.#released;
  }

  /** One doubling per step, and only while half of those released have succeeded. */
  #widen(nowMs: number): boolean {
    if (nowMs < this.#widenedAt + this.#stepMs || this.#succeeded * 2 < this.#released) return false;
    this.#window *= 2;
    this.#widenedAt = nowMs;
    return true;
  }
}
