/**
 * The memory store: one process, one Map. A claim is a check and a set on
 * the Map with no `await` between them, so it is atomic within the
 * process (JavaScript runs one callback at a time). Time comes from the
 * injected clock, so a test moves leases and retention without waiting.
 */
import * as z from 'zod';
import type { Claim, ClaimRequest, ClaimResult, IdempotencyStore, StoredResponse } from './store.js';
import { parseOptions } from './validate.js';

export interface MemoryIdempotencyStoreOptions {
  /**
   * Clock for leases and retention, epoch milliseconds.
   * @default Date.now
   * @example memoryIdempotencyStore({ now: () => fakeClock.now() })
   */
  now?: () => number;
  /**
   * How often claims look for expired records to delete (by `now`), so a
   * long-running process keeps only what retention asks for.
   * @default 60_000
   */
  sweepIntervalMs?: number;
}

interface Entry {
  fingerprint: string;
  epoch: number;
  leaseUntil: number;
  retainUntil: number;
  atomic: boolean;
  reported: boolean;
  response: StoredResponse | undefined;
}

const schema = z.strictObject({
  now: z.optional(z.custom<() => number>((v) => typeof v === 'function', 'must be a function')),
  sweepIntervalMs: z.optional(z.number().int().min(1)),
});

/**
 * The key of the Map, unambiguous whatever characters scope and key hold:
 * `scope\nkey` when the key has no newline (a key read from a header never
 * has: the scope is everything before the last one), else JSON, which holds
 * no raw newline and so never meets the first form.
 */
const id = (scope: string, key: string) => (key.includes('\n') ? JSON.stringify([scope, key]) : `${scope}\n${key}`);

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #sweepIntervalMs: number;
  #sweptAt: number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const parsed = parseOptions(schema, options, 'memoryIdempotencyStore');
    this.#now = parsed.now ?? Date.now;
    this.#sweepIntervalMs = parsed.sweepIntervalMs ?? 60_000;
    this.#sweptAt = this.#now();
  }

  /** Records held (expired ones too, until swept). */
  get size(): number {
    return this.#entries.size;
  }

  claim(request: ClaimRequest): Promise<ClaimResult> {
    return Promise.resolve(this.#claim(request));
  }

  /** Synchronous from the read of the Map to its write: this is the atomic claim. */
  #claim(request: ClaimRequest): ClaimResult {
    const now = this.#now();
    if (now - this.#sweptAt >= this.#sweepIntervalMs) this.#sweep(now);
    const entryId = id(request.scope, request.key);
    const entry = this.#entries.get(entryId);
    if (entry === undefined || entry.retainUntil <= now) {
      this.#entries.set(entryId, {
        fingerprint: request.fingerprint,
        epoch: (entry?.epoch ?? 0) + 1,
        leaseUntil: now + request.leaseMs,
        retainUntil: now + request.retentionMs,
        atomic: request.atomic,
        reported: false,
        response: undefined,
      });
      return { kind: 'claimed', epoch: (entry?.epoch ?? 0) + 1, rerun: false };
    }
    if (entry.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
    if (entry.response !== undefined) return { kind: 'completed', response: entry.response };
    if (entry.leaseUntil > now) return { kind: 'in_progress', leaseRemainingMs: entry.leaseUntil - now };
    if (request.rerunAbandoned || entry.atomic) {
      entry.epoch += 1;
      entry.leaseUntil = now + request.leaseMs;
      entry.atomic = request.atomic;
      entry.reported = false;
      return { kind: 'claimed', epoch: entry.epoch, rerun: true };
    }
    const firstReport = !entry.reported;
    entry.reported = true;
    return { kind: 'abandoned', epoch: entry.epoch, firstReport };
  }

  #owned(claim: Claim): Entry | undefined {
    const entry = this.#entries.get(id(claim.scope, claim.key));
    return entry !== undefined && entry.epoch === claim.epoch && entry.response === undefined ? entry : undefined;
  }

  complete(claim: Claim, response: StoredResponse): Promise<boolean> {
    const entry = this.#owned(claim);
    if (entry !== undefined) entry.response = response;
    return Promise.resolve(entry !== undefined);
  }

  renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const entry = this.#owned(claim);
    if (entry !== undefined) entry.leaseUntil = this.#now() + leaseMs;
    return Promise.resolve(entry !== undefined);
  }

  release(claim: Claim): Promise<void> {
    if (this.#owned(claim) !== undefined) this.#entries.delete(id(claim.scope, claim.key));
    return Promise.resolve();
  }

  abandon(claim: Claim): Promise<void> {
    const entry = this.#owned(claim);
    if (entry !== undefined) entry.leaseUntil = Math.min(entry.leaseUntil, this.#now());
    return Promise.resolve();
  }

  sweep(): Promise<number> {
    return Promise.resolve(this.#sweep(this.#now()));
  }

  #sweep(now: number): number {
    this.#sweptAt = now;
    let removed = 0;
    for (const [entryId, entry] of this.#entries) {
      if (entry.retainUntil <= now) {
        this.#entries.delete(entryId);
        removed += 1;
      }
    }
    return removed;
  }
}

/**
 * A store for one process (tests, a single server, development).
 * @example idempotency({ store: memoryIdempotencyStore(), scopeOf, routes: { 'POST /payments': {} } })
 */
export function memoryIdempotencyStore(options: MemoryIdempotencyStoreOptions = {}): MemoryIdempotencyStore {
  return new MemoryIdempotencyStore(options);
}
