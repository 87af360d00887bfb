/**
 * The server's idempotency-key table: on arrival a key is claimed (or its
 * stored response replayed, or the request refused as a mismatch or as in
 * progress); after the effect the claim either keeps the response for replay
 * or, when the effect failed, is released so a retry runs it.
 */

import { rejection, type WireResponse, withHeader } from './responses.js';
import type { Settings } from './settings.js';
import type { LedgerOutcome } from './types.js';

/** Per-key state. `response` is set once the effect has committed. */
export interface KeyRecord {
  state: 'in_progress' | 'completed';
  fingerprint: string;
  createdAt: number;
  response?: WireResponse;
}

/** What to do with a request, decided synchronously so the key claim is atomic. */
export type Decision =
  | { kind: 'respond'; outcome: LedgerOutcome; response: WireResponse }
  | { kind: 'destroy' }
  | { kind: 'effect'; outcome: 'effect' | 'expired_new'; claim: KeyRecord | undefined };

export class KeyTable {
  readonly #settings: Pick<Settings, 'profile' | 'keyRetentionMs' | 'now'>;
  readonly #records = new Map<string, KeyRecord>();

  constructor(settings: Pick<Settings, 'profile' | 'keyRetentionMs' | 'now'>) {
    this.#settings = settings;
  }

  /** Check-and-set on the key map with no await in between: this is what makes a claim atomic. */
  decide(key: string, fingerprint: string): Decision {
    const { profile, keyRetentionMs, now } = this.#settings;
    let record = this.#records.get(key);
    const expired = record !== undefined && now() - record.createdAt >= keyRetentionMs;
    if (expired) {
      this.#records.delete(key);
      record = undefined;
    }
    if (record === undefined) {
      const claim: KeyRecord = { state: 'in_progress', fingerprint, createdAt: now() };
      this.#records.set(key, claim);
      return { kind: 'effect', outcome: expired ? 'expired_new' : 'effect', claim };
    }
    if (record.fingerprint !== fingerprint) {
      return { kind: 'respond', outcome: 'mismatch', response: rejection(profile, 'mismatch') };
    }
    if (record.state === 'in_progress' || record.response === undefined) {
      return { kind: 'respond', outcome: 'in_progress', response: rejection(profile, 'in_progress') };
    }
    const response = withHeader(record.response, 'Idempotent-Replayed', 'true');
    return { kind: 'respond', outcome: 'replay', response };
  }

  /**
   * After the effect: a failed one (>= 500, or a handler that threw) releases
   * the key, since nothing happened and a retry must run it; any other keeps
   * its response for replay. Only while `claim` is still the key's record (a
   * `reset()` or an expiry may have replaced it meanwhile).
   */
  settle(key: string | undefined, claim: KeyRecord | undefined, response: WireResponse): void {
    if (key === undefined || claim === undefined || this.#records.get(key) !== claim) return;
    if (response.status >= 500) {
      this.#records.delete(key);
      return;
    }
    claim.state = 'completed';
    claim.response = response;
  }

  clear(): void {
    this.#records.clear();
  }
}
