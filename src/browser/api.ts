/**
 * What the browser client offers, apart from how it is wired (client.ts):
 * the core client's methods, plus the browser's events, a live view,
 * `clear()` and a status.
 */
import type { OncelyClient } from '../client.js';
import type { ClearOptions, ClearResult } from './clear.js';
import type { BrowserEventName, BrowserListener } from './events.js';
import type { ClientStatus, SubscribeOptions, Subscriber } from './subscribe.js';

export interface BrowserClient extends Omit<OncelyClient, 'on'> {
  /** Core events of this tab, plus the browser's (`leader:changed`, `connectivity:changed`, `store:wiped`, …). */
  on<E extends BrowserEventName>(event: E, fn: BrowserListener<E>): () => void;
  /**
   * A live view of the queue for UIs, across tabs: `fn` gets a snapshot now
   * and again whenever what it shows changes. Returns an unsubscribe.
   */
  subscribe(fn: Subscriber, options?: SubscribeOptions): () => void;
  /** Removes the user's queued operations (e.g. on logout); those in flight stay and settle. */
  clear(options?: ClearOptions): Promise<ClearResult>;
  status(): ClientStatus;
  /** Resolves when start-up (wipe check, persistence, first drain) has run. Never rejects. */
  readonly ready: Promise<void>;
  /** This tab's lease owner id. */
  readonly owner: string;
}
