/**
 * Events the browser client adds to the core's, and a tiny typed emitter
 * for them (listeners isolated like the core's: a throw never breaks the
 * client, it is reported to `error` listeners).
 */
import type { OncelyClient } from '../client.js';
import { type OncelyEventName, type OncelyEvents, TypedEmitter } from '../events.js';
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
  /**
   * The drainer looked for due work (`due`: operations it could hand to the
   * loop now; waiting offline or held by another owner do not count).
   */
  'drain:pass': { due: number };
}

export type ConnectivityReason = 'offline' | 'online' | 'not_sent' | 'transport_error' | 'visible' | 'recheck';

export type BrowserEvents = OncelyEvents & BrowserOnlyEvents;
export type BrowserEventName = keyof BrowserEvents;
export type BrowserListener<E extends BrowserEventName> = (payload: BrowserEvents[E]) => void;

/** The browser client's own events; a throwing listener is reported as `background:error`. */
export class BrowserEmitter extends TypedEmitter<BrowserOnlyEvents> {
  constructor() {
    super((error, event) => {
      if (event !== 'background:error')
        this.emit('background:error', { error, during: `listener of ${String(event)}` });
    });
  }
}

export const BROWSER_ONLY_EVENTS: readonly (keyof BrowserOnlyEvents)[] = [
  'leader:changed',
  'connectivity:changed',
  'store:wiped',
  'storage:persisted',
  'background:error',
  'drain:pass',
];

/** Subscribes `fn` where `event` is emitted: the browser's emitter or the core client's. */
export function listen<E extends BrowserEventName>(
  browser: BrowserEmitter,
  core: Pick<OncelyClient, 'on'>,
  event: E,
  fn: BrowserListener<E>,
): () => void {
  if ((BROWSER_ONLY_EVENTS as readonly string[]).includes(event)) {
    return browser.on(event as keyof BrowserOnlyEvents, fn as BrowserListener<keyof BrowserOnlyEvents>);
  }
  return core.on(event as OncelyEventName, fn as BrowserListener<OncelyEventName>);
}
