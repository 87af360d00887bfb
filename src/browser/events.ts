/**
 * Events the browser client adds to the core's, and a tiny typed emitter
 * for them (listeners isolated like the core's: a throw never breaks the
 * client, it is reported to `error` listeners).
 */
import type { OncelyEvents } from '../events.js';
import type { WipeReport } from './persistence.js';

export interface BrowserOnlyEvents {
  /** This tab became (or stopped being) the drainer. */
  'leader:changed': { leader: boolean; mode: 'locks' | 'leases' };
  /** The client paused (offline, or an attempt could not be sent) or resumed. */
  'connectivity:changed': { online: boolean; reason: ConnectivityReason };
  /** The IndexedDB database was found empty although it had been used: operations were lost. */
  'store:wiped': WipeReport;
  /** The answer to `navigator.storage.persist()` (when `persist: true`). */
  'storage:persisted': { persisted: boolean };
  /** Background work (a drain pass, a wipe check) failed; the client carries on. */
  'background:error': { error: unknown; during: string };
}

export type ConnectivityReason = 'offline' | 'online' | 'not_sent' | 'transport_error' | 'visible' | 'recheck';

export type BrowserEvents = OncelyEvents & BrowserOnlyEvents;
export type BrowserEventName = keyof BrowserEvents;
export type BrowserListener<E extends BrowserEventName> = (payload: BrowserEvents[E]) => void;

type OnlyListener<E extends keyof BrowserOnlyEvents> = (payload: BrowserOnlyEvents[E]) => void;

export class BrowserEmitter {
  readonly #listeners = new Map<keyof BrowserOnlyEvents, Set<(payload: never) => void>>();

  on<E extends keyof BrowserOnlyEvents>(event: E, fn: OnlyListener<E>): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    set.add(fn as (payload: never) => void);
    return () => set.delete(fn as (payload: never) => void);
  }

  emit<E extends keyof BrowserOnlyEvents>(event: E, payload: BrowserOnlyEvents[E]): void {
    const set = this.#listeners.get(event);
    if (set === undefined) return;
    for (const fn of [...set]) {
      try {
        (fn as OnlyListener<E>)(payload);
      } catch (error) {
        if (event !== 'background:error') this.emit('background:error', { error, during: `listener of ${event}` });
      }
    }
  }
}

export const BROWSER_ONLY_EVENTS: readonly (keyof BrowserOnlyEvents)[] = [
  'leader:changed',
  'connectivity:changed',
  'store:wiped',
  'storage:persisted',
  'background:error',
];
