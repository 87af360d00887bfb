/**
 * The seam between the idempotency middleware and where its records live.
 * A store does one thing the middleware cannot do itself: decide a claim
 * atomically. `claim` is one insert-if-absent (never a read followed by a
 * write), so two requests racing with one key can never both run.
 */

/** A response as stored for replay: status, the allow-listed headers, the exact body bytes. */
export interface StoredResponse {
  status: number;
  /** Lower-case names, in ascending order (the allow-list's). */
  headers: readonly (readonly [string, string])[];
  body: Uint8Array;
}

export interface ClaimRequest {
  /**
   * What the key is unique within: method, route and the caller's identity,
   * serialised. One caller's key never meets another caller's record.
   */
  scope: string;
  key: string;
  fingerprint: string;
  /** How long the claimer may run before its claim counts as abandoned. */
  leaseMs: number;
  /** How long the record (and its outcome) is kept from the claim on. */
  retentionMs: number;
  /** An abandoned claim (lease over, no outcome) with this fingerprint may be claimed again under a new epoch. */
  rerunAbandoned: boolean;
  /**
   * The claimer commits its effect and the outcome in one transaction:
   * should it vanish without an outcome, nothing took effect, so anyone may
   * run the request again (whatever `rerunAbandoned` says).
   */
  atomic: boolean;
}

/** The answer of one atomic claim. */
export type ClaimResult =
  /**
   * This request owns the key under `epoch` (`rerun`: an abandoned claim was
   * taken over). `claim`: the store's own handle for it, handed back to every
   * later write (a store may keep in it what finds the record again without a
   * lookup); without one, the guard makes `{ scope, key, epoch }`.
   */
  | { kind: 'claimed'; epoch: number; rerun: boolean; claim?: Claim }
  /** The key's record was made by a request with another fingerprint. */
  | { kind: 'mismatch' }
  /** Another request holds the key, its lease running for `leaseRemainingMs` more. */
  | { kind: 'in_progress'; leaseRemainingMs: number }
  /**
   * A claim whose lease ran out without an outcome: it may have taken effect.
   * `firstReport` is true for exactly one request per abandoned claim (the hook runs once).
   */
  | { kind: 'abandoned'; epoch: number; firstReport: boolean }
  /** The stored outcome, to replay. */
  | { kind: 'completed'; response: StoredResponse };

/** What a claimer holds: every later write is fenced by its epoch. */
export interface Claim {
  scope: string;
  key: string;
  epoch: number;
}

/** What a transactional run tells the store once the handler has answered. */
export interface TransactionOutcome<T> {
  value: T;
  /** Stored with the effect in the same transaction; `undefined` rolls the effect back and releases the key. */
  store: StoredResponse | undefined;
}

export interface IdempotencyStore<Tx = never> {
  /** Atomic insert-if-absent (or a takeover under a new epoch, when allowed). */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** Stores the outcome; false when the claim was taken over meanwhile (a newer epoch owns the key). */
  complete(claim: Claim, response: StoredResponse): Promise<boolean>;
  /**
   * Extends the claim's lease to `leaseMs` from now while its handler runs
   * (a heartbeat): only while `claim.epoch` owns the key and no outcome is
   * stored. False when it does not (renewal stops).
   */
  renew(claim: Claim, leaseMs: number): Promise<boolean>;
  /** Forgets the claim (nothing happened, a retry must run): only while `claim.epoch` still owns it. */
  release(claim: Claim): Promise<void>;
  /** Ends the lease now without an outcome (the handler failed midway: the effect is unknown). */
  abandon(claim: Claim): Promise<void>;
  /** Deletes records past their retention; resolves with how many. */
  sweep(): Promise<number>;
  /**
   * Runs `work` in one transaction with the outcome: the handler's own
   * writes (through `tx`) and the stored response commit together or not at
   * all. Rejects with `LeaseTakenOverError` (after rolling back) when a
   * newer epoch owns the key. Without a claim (an unguarded request) the
   * transaction just commits. Only stores with transactions have it.
   */
  transaction?<T>(claim: Claim | undefined, work: (tx: Tx) => Promise<TransactionOutcome<T>>): Promise<T>;
}

/** A transactional run found its claim taken over: its effect was rolled back. */
export class LeaseTakenOverError extends Error {
  override name = 'LeaseTakenOverError';
}
