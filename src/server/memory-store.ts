/**
 * The memory store: one process, one Map. A claim is a check and a set on
 * the Map with no `await` between them, so it is atomic within the
 * process (JavaScript runs one callback at a time). Time comes from the
 * injected clock, so a test moves leases and retention without waiting.
 *
 * It keeps every record for its retention (a day by default: tens of
 * thousands of records on a busy server), and the garbage collector copies
 * each new one twice before it settles, then visits it on every full
 * collection. So a record is kept small, one object where it can be: the
 * outcome folded into it, times as small integers (milliseconds since the
 * store was made, which the engine stores inline, not as a boxed double),
 * a small body as a one-byte string (one leaf object instead of a typed
 * array, its buffer and the buffer's memory), and a header list shared
 * with the records that stored the same one. A replay rebuilds the
 * `StoredResponse` from these.
 */
import * as z from 'zod';
import { latin1Bytes, latin1String, ownedBytes } from './bytes.js';
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

type HeaderList = StoredResponse['headers'];

const NO_HEADERS: HeaderList = Object.freeze([]);

/**
 * One record, its outcome in it. Times are milliseconds since the store's
 * origin. `epoch` is 0 once the record is gone from the store (released,
 * swept, replaced): no claim matches it then.
 */
class Entry {
  reported = false;
  /** `undefined` until the outcome is stored; a string holds one byte per character. */
  body: string | Uint8Array | undefined = undefined;
  status = 0;
  headers: HeaderList = NO_HEADERS;

  constructor(
    public fingerprint: string,
    public epoch: number,
    public leaseUntil: number,
    public retainUntil: number,
    public atomic: boolean,
  ) {}
}

/** Bodies up to this many bytes are kept as strings (larger ones are few, and copying them costs more than it saves). */
const STRING_BODY_MAX_BYTES = 1024;

/** A small body as a one-byte string; a larger one as bytes that own their buffer (not a window that keeps a larger one alive). */
function packBody(bytes: Uint8Array): string | Uint8Array {
  return bytes.length > STRING_BODY_MAX_BYTES ? ownedBytes(bytes) : latin1String(bytes);
}

function unpackBody(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? latin1Bytes(body) : body;
}

/** How many distinct header lists are shared at once (a route answers with a few; a `Location` per response is never shared). */
const SHARED_HEADER_LISTS = 16;

/**
 * Header lists as records keep them: the same list stored by many
 * responses (`content-type: application/json`) is one frozen array they
 * share, found by comparing against the few seen lately (no key to build).
 */
class HeaderLists {
  readonly #lists: HeaderList[] = [];
  #next = 0;

  of(headers: HeaderList): HeaderList {
    if (headers.length === 0) return NO_HEADERS;
    for (const list of this.#lists) if (sameHeaderList(list, headers)) return list;
    const own = Object.freeze(headers.map(([name, value]) => Object.freeze([name, value] as const)));
    // The oldest list makes room: records that hold it keep it.
    this.#lists[this.#next] = own;
    this.#next = (this.#next + 1) % SHARED_HEADER_LISTS;
    return own;
  }
}

function sameHeaderList(a: HeaderList, b: HeaderList): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as readonly [string, string];
    const y = b[i] as readonly [string, string];
    if (x[0] !== y[0] || x[1] !== y[1]) return false;
  }
  return true;
}

/**
 * A claim as this store hands it out: with its record, so the writes after
 * it (outcome, renewals, release) find it without a lookup in a Map of every
 * record kept. Its record stops matching once gone (epoch 0), so a claim
 * whose record was released or swept never writes to the one that took its
 * place, even under the same epoch number.
 */
class MemoryClaim implements Claim {
  constructor(
    readonly scope: string,
    readonly key: string,
    readonly epoch: number,
    readonly entry: Entry,
    readonly store: MemoryIdempotencyStore,
  ) {}
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

let claimNowOf: (store: MemoryIdempotencyStore, request: ClaimRequest) => ClaimResult;

/**
 * `store`'s claim answered at once when it is this store (whose claim is
 * decided synchronously anyway), so the guard need not await a promise on
 * every request; `undefined` for any other store, or one whose `claim` was
 * replaced (a test's, a wrapper's), which the guard calls as usual.
 */
export function claimAtOnce(store: IdempotencyStore<unknown>, request: ClaimRequest): ClaimResult | undefined {
  return store instanceof MemoryIdempotencyStore && store.claim === MemoryIdempotencyStore.prototype.claim
    ? claimNowOf(store, request)
    : undefined;
}

export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #headerLists = new HeaderLists();
  readonly #clock: () => number;
  /** The clock's reading when the store was made: record times count from it. */
  readonly #origin: number;
  readonly #sweepIntervalMs: number;
  #sweptAt: number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    const parsed = parseOptions(schema, options, 'memoryIdempotencyStore');
    this.#clock = parsed.now ?? Date.now;
    this.#origin = this.#clock();
    this.#sweepIntervalMs = parsed.sweepIntervalMs ?? 60_000;
    this.#sweptAt = 0;
  }

  /** Milliseconds since the store was made (a small integer for weeks). */
  #now(): number {
    return this.#clock() - this.#origin;
  }

  /** Records held (expired ones too, until swept). */
  get size(): number {
    return this.#entries.size;
  }

  claim(request: ClaimRequest): Promise<ClaimResult> {
    return Promise.resolve(this.#claim(request));
  }

  static {
    claimNowOf = (store, request) => store.#claim(request);
  }

  /** Synchronous from the read of the Map to its write: this is the atomic claim. */
  #claim(request: ClaimRequest): ClaimResult {
    const now = this.#now();
    if (now - this.#sweptAt >= this.#sweepIntervalMs) this.#sweep(now);
    const entryId = id(request.scope, request.key);
    const entry = this.#entries.get(entryId);
    if (entry === undefined || entry.retainUntil <= now) {
      const epoch = (entry?.epoch ?? 0) + 1;
      if (entry !== undefined) entry.epoch = 0;
      const fresh = new Entry(
        request.fingerprint,
        epoch,
        now + request.leaseMs,
        now + request.retentionMs,
        request.atomic,
      );
      this.#entries.set(entryId, fresh);
      return {
        kind: 'claimed',
        epoch,
        rerun: false,
        claim: new MemoryClaim(request.scope, request.key, epoch, fresh, this),
      };
    }
    if (entry.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
    if (entry.body !== undefined) {
      return {
        kind: 'completed',
        response: { status: entry.status, headers: entry.headers, body: unpackBody(entry.body) },
      };
    }
    if (entry.leaseUntil > now) return { kind: 'in_progress', leaseRemainingMs: entry.leaseUntil - now };
    if (request.rerunAbandoned || entry.atomic) {
      entry.epoch += 1;
      entry.leaseUntil = now + request.leaseMs;
      entry.atomic = request.atomic;
      entry.reported = false;
      const claim = new MemoryClaim(request.scope, request.key, entry.epoch, entry, this);
      return { kind: 'claimed', epoch: entry.epoch, rerun: true, claim };
    }
    const firstReport = !entry.reported;
    entry.reported = true;
    return { kind: 'abandoned', epoch: entry.epoch, firstReport };
  }

  #owned(claim: Claim): Entry | undefined {
    const entry =
      claim instanceof MemoryClaim && claim.store === this
        ? claim.entry
        : this.#entries.get(id(claim.scope, claim.key));
    return entry !== undefined && entry.epoch === claim.epoch && entry.body === undefined ? entry : undefined;
  }

  complete(claim: Claim, response: StoredResponse): Promise<boolean> {
    const entry = this.#owned(claim);
    if (entry !== undefined) {
      entry.status = response.status;
      entry.headers = this.#headerLists.of(response.headers);
      entry.body = packBody(response.body);
    }
    return Promise.resolve(entry !== undefined);
  }

  renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const entry = this.#owned(claim);
    if (entry !== undefined) entry.leaseUntil = this.#now() + leaseMs;
    return Promise.resolve(entry !== undefined);
  }

  release(claim: Claim): Promise<void> {
    const entry = this.#owned(claim);
    if (entry !== undefined) {
      entry.epoch = 0;
      this.#entries.delete(id(claim.scope, claim.key));
    }
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
        entry.epoch = 0;
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
