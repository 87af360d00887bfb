import type { Fault, FaultMatch, Hold } from './types.js';

/** The parts of a request that fault and hold matchers compare. */
export interface RequestIdentity {
  method: string;
  path: string;
  key: string | undefined;
}

/** Every field the matcher names must equal the request's; an empty matcher matches all. */
export function matches(match: FaultMatch | undefined, request: RequestIdentity): boolean {
  if (match === undefined) return true;
  if (match.key !== undefined && match.key !== request.key) return false;
  if (match.path !== undefined && match.path !== request.path) return false;
  if (match.method !== undefined && match.method.toUpperCase() !== request.method) return false;
  return true;
}

/** One-shot faults, consumed in script order by the first request each matches. */
export class FaultQueue {
  #faults: Fault[] = [];

  push(faults: readonly Fault[]): void {
    this.#faults.push(...faults);
  }

  take(request: RequestIdentity): Fault | undefined {
    const index = this.#faults.findIndex((fault) => matches(fault.match, request));
    if (index === -1) return undefined;
    return this.#faults.splice(index, 1)[0];
  }

  clear(): void {
    this.#faults = [];
  }
}

/** A hold waiting for its request: `arrive` is called by the server, `gate` awaited. */
export interface PendingHold {
  match: FaultMatch | undefined;
  arrive(): void;
  gate: Promise<void>;
}

/**
 * Creates a hold whose `release()` may be called before or after the request
 * arrives; either way the request proceeds exactly once.
 */
export function createHold(match: FaultMatch | undefined): { pending: PendingHold; hold: Hold } {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { pending: { match, arrive, gate }, hold: { release, arrived } };
}

export class HoldQueue {
  #holds: PendingHold[] = [];

  push(hold: PendingHold): void {
    this.#holds.push(hold);
  }

  take(request: RequestIdentity): PendingHold | undefined {
    const index = this.#holds.findIndex((hold) => matches(hold.match, request));
    if (index === -1) return undefined;
    return this.#holds.splice(index, 1)[0];
  }

  /** Drops holds no request has claimed yet; held requests keep waiting for `release()`. */
  clear(): void {
    this.#holds = [];
  }
}
