/**
 * What this tab tells the other tabs of the origin, and what it learns from
 * them, over the tab channel (channel.ts). Kept apart from the wiring so
 * each message's meaning sits in one place:
 *
 * - out: a kick (new work for the drainer), a change outside the loop, a
 *   wipe found here, and every relayed core event;
 * - in: the same, turned into wake-ups: of the drain loop (`onKick`), of
 *   operations this tab waits on (see wakeups.ts), of the live view
 *   (`onActivity`).
 *
 * Messages are hints; a tab that misses one still learns from polling.
 */
import type { OncelyEventName, OncelyEvents } from '../events.js';
import type { Shutdown } from '../flow/engine/shutdown.js';
import type { Runtime } from '../runtime.js';
import { openTabChannel, type TabChannel, type TabMessage } from './channel.js';
import type { BroadcastChannelLike } from './env.js';
import { channelName } from './names.js';
import type { WipeReport } from './persistence.js';
import { Wakeups } from './wakeups.js';

export interface TabSyncOptions {
  BroadcastChannel: BroadcastChannelLike | undefined;
  database: string;
  /** This tab's lease owner id (its own messages are not echoed back). */
  owner: string;
  runtime: Pick<Runtime, 'sleep'>;
  /** How often a waiting operation is re-read when no announcement came. */
  settlePollMs: number;
  closed: Shutdown;
  /** Another tab has work for the drainer, or changed the store. */
  onKick: () => void;
  /** Another tab found the database wiped. */
  onWiped: (report: WipeReport) => void;
  /** This tab or another did something the live view may show. */
  onActivity: () => void;
}

export class TabSync {
  readonly #options: TabSyncOptions;
  readonly #wakeups: Wakeups;
  readonly #channel: TabChannel;

  constructor(options: TabSyncOptions) {
    this.#options = options;
    this.#wakeups = new Wakeups(options.runtime, options.settlePollMs, options.closed);
    this.#channel = openTabChannel(options.BroadcastChannel, channelName(options.database), options.owner, (message) =>
      this.#receive(message),
    );
  }

  /** Tells the drainer there is new work. */
  kick(): void {
    this.#channel.post({ type: 'kick', from: this.#options.owner });
  }

  /** The store changed outside the loop (`clear()`, `discard`): every waiter re-reads. */
  changed(): void {
    this.#channel.post({ type: 'changed', from: this.#options.owner });
    this.#wakeups.wakeAll();
  }

  wiped(report: WipeReport): void {
    this.#channel.post({ type: 'wiped', from: this.#options.owner, report });
  }

  /** A core event of this tab: relayed, a settlement wakes whoever waits on it here, the live view refreshes. */
  relay<E extends OncelyEventName>(name: E, payload: OncelyEvents[E]): void {
    this.#channel.post({ type: 'event', from: this.#options.owner, name, payload } as TabMessage);
    if (name === 'settled') this.#wakeups.wake((payload as OncelyEvents['settled']).key);
    this.#options.onActivity();
  }

  /** Leadership changed: every waiter re-reads (it may now drive the operation itself). */
  wakeAll(): void {
    this.#wakeups.wakeAll();
  }

  /** Resolves on the next hint that `key` may have changed (or after `settlePollMs`). */
  nextChange(key: string, signal: AbortSignal | undefined): Promise<void> {
    return this.#wakeups.next(key, signal);
  }

  close(): void {
    this.#channel.close();
  }

  #receive(message: TabMessage): void {
    switch (message.type) {
      case 'kick':
        this.#options.onKick();
        break;
      case 'changed':
        this.#wakeups.wakeAll();
        this.#options.onKick();
        this.#options.onActivity();
        break;
      case 'wiped':
        this.#options.onWiped(message.report);
        break;
      case 'event':
        if (message.name === 'settled') this.#wakeups.wake(message.payload.key);
        this.#options.onActivity();
        break;
    }
  }
}
