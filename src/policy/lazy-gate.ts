/**
 * A host's outage gate as the loop holds it: pristine until the first
 * attempt that did not simply succeed, then the full `HostGate` (gate.ts,
 * loaded with the rest of what follows such an attempt: flow/decide/next-step.ts).
 *
 * Why pristine needs no code of its own: until something fails, a gate is
 * closed, its budget full (a first attempt adds tokens only up to the
 * capacity they start at), the host reachable, nothing held and no probe
 * out. Every call the loop makes on a success path then changes nothing
 * (test/policy/lazy-gate.test.ts checks each against a real `HostGate`),
 * so they are no-ops here until `upgrade` builds the real one from the same
 * settings. From then on every call goes to it, for every loop holding this
 * object, and the listeners added before it keep hearing its changes.
 */
import type { Admission, GateSettings, HostGate } from './gate.js';

export class LazyGate {
  readonly settings: GateSettings;
  #full: HostGate | undefined;
  readonly #listeners = new Set<(recovered: boolean) => void>();

  constructor(settings: GateSettings) {
    this.settings = settings;
  }

  /** The full gate, once something needed it. */
  get full(): HostGate | undefined {
    return this.#full;
  }

  /** Builds the full gate (once) from `make`, the class in gate.ts handed over by whoever loaded it. */
  upgrade(make: new (settings: GateSettings) => HostGate): HostGate {
    if (this.#full === undefined) {
      this.#full = new make(this.settings);
      this.#full.onChange((recovered) => {
        for (const fn of [...this.#listeners]) fn(recovered);
      });
    }
    return this.#full;
  }

  get refusing(): boolean {
    return this.#full?.refusing ?? false;
  }

  noteFirstAttempt(): void {
    this.#full?.noteFirstAttempt();
  }

  /** Pristine, only an unbudgeted ask (is the host reachable?) is answered: yes, at once. */
  admitRetry(id: string, nowMs: number, random: () => number, budgeted = true): Admission {
    if (this.#full !== undefined) return this.#full.admitRetry(id, nowMs, random, budgeted);
    if (budgeted) throw new Error('a budgeted retry needs the full gate: upgrade it first');
    return { kind: 'go', atMs: nowMs, probe: false };
  }

  forget(id: string): void {
    this.#full?.forget(id);
  }

  spend(id: string): void {
    this.#full?.spend(id);
  }

  giveBack(id: string): void {
    this.#full?.giveBack(id);
  }

  releaseProbe(id?: string): void {
    this.#full?.releaseProbe(id);
  }

  reportSuccess(probe: boolean, nowMs: number, id?: string): void {
    this.#full?.reportSuccess(probe, nowMs, id);
  }

  reportFailure(probe: boolean, nowMs: number, hintMs: number | undefined, random: () => number, id?: string): void {
    this.#upgraded().reportFailure(probe, nowMs, hintMs, random, id);
  }

  reportRefused(probe: boolean, nowMs: number, random: () => number, id?: string): void {
    this.#upgraded().reportRefused(probe, nowMs, random, id);
  }

  onChange(fn: (recovered: boolean) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #upgraded(): HostGate {
    if (this.#full === undefined) throw new Error('a failure needs the full gate: upgrade it first');
    return this.#full;
  }
}

/**
 * The gates of one client: one per host (or per endpoint on a host, with
 * `budget.per: 'endpoint'`), created on first use.
 *
 * @internal
 */
export class HostGates {
  readonly #gates = new Map<string, LazyGate>();

  gate(scope: string, settings: GateSettings): LazyGate {
    let gate = this.#gates.get(scope);
    if (gate === undefined) {
      gate = new LazyGate(settings);
      this.#gates.set(scope, gate);
    }
    return gate;
  }
}
