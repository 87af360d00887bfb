/**
 * The drain loop: decides when the drainer looks for due work, and who
 * sends it. It exists apart from the browser client so that any context
 * holding the store can drain the same queue: a page, or a service worker
 * woken by a `sync` event. It therefore reads no `document`, `window` or
 * `localStorage`; everything it reacts to is handed in:
 *
 * - `wake`: something says "look now" (a tab's kick, the page becoming
 *   visible, a service worker's sync event: the caller decides);
 * - `connectivity`: coming back online;
 * - `leadership`: becoming the drainer;
 * - every `intervalMs`: catches work nobody announced (a missed message,
 *   an expired lease), followed by the caller's housekeeping (`onInterval`).
 *
 * A pass (`drain`) fences stale leases (locks mode), counts the due records
 * (`drain:pass`) and hands them to the core loop (`resume`), which calls
 * back `dispatch` for each: the dispatcher (drainer.ts) claims a slot and
 * runs it, or, in a tab that is not the drainer, waits for the drainer.
 */
import type { ResumeOptions } from '../client.js';
import type { TypedEmitter } from '../events.js';
import { emptySummary, type ResumeSummary } from '../flow/calls/resume.js';
import type { Shutdown } from '../flow/engine/shutdown.js';
import type { OperationRecord } from '../model.js';
import type { Runtime } from '../runtime.js';
import type { OperationStore } from '../store/store.js';
import { createDispatcher, type Dispatch, fenceForeignLease, Slots } from './drainer.js';
import type { BrowserOnlyEvents } from './events.js';
import type { Leadership } from './leader.js';

/** A source of "look for due work now" hints: calls `wake` on each; returns an unsubscribe. */
export type WakeSource = (wake: () => void) => () => void;

/** Where the loop reports its passes and the failures of its background work. */
export type DrainEvents = Pick<TypedEmitter<Pick<BrowserOnlyEvents, 'drain:pass' | 'background:error'>>, 'emit'>;

export interface DrainLoopOptions {
  store: OperationStore;
  runtime: Pick<Runtime, 'now' | 'sleep'>;
  /** This client's lease owner id. */
  owner: string;
  leadership: Leadership;
  /** Only `onChange` is used: coming back online starts a pass. */
  connectivity: { onChange(fn: (online: boolean) => void): () => void };
  wake: WakeSource;
  /** Operations sent at once, across scopes. */
  concurrency: number;
  /** Time between the periodic passes. */
  intervalMs: number;
  /** Whether this context may send `record` now (e.g. it belongs to the signed-in user). */
  sendable: (record: OperationRecord) => boolean;
  /** Tells the drainer (another context) there is new work. */
  kick: () => void;
  /** Resolves on the next hint that `key` may have changed (or after a poll interval). */
  nextChange: (key: string, signal: AbortSignal | undefined) => Promise<void>;
  /** Hands every due operation to the core loop, which calls `dispatch` for each (the core's `resume`). */
  resume: (options: ResumeOptions) => Promise<ResumeSummary>;
  /** Housekeeping after each periodic pass is scheduled, while this context is the drainer. */
  onInterval?: () => Promise<void>;
  events: DrainEvents;
  /** Stopping it stops the loop: no pass starts afterwards, timers and subscriptions are dropped. */
  closed: Shutdown;
}

export interface DrainLoop {
  /** The core client's `dispatch` hook. */
  readonly dispatch: Dispatch;
  /** Soon, one pass (hints in a burst share it). Only the drainer drains. */
  schedule(): void;
  /** One pass now; `always` calls `resume` even when nothing looked due. */
  drain(always?: boolean, options?: ResumeOptions): Promise<ResumeSummary>;
  /** The first pass (if the drainer) and the periodic passes. Call once. */
  start(): void;
}

/** Hints that arrive within this window are served by one drain pass. */
const COALESCE_MS = 10;

export function createDrainLoop(options: DrainLoopOptions): DrainLoop {
  const { store, runtime, owner, leadership, events, closed } = options;
  /** For the runtime's sleeps of this loop's own timers. */
  const timers = new AbortController();
  const background = (during: string) => (error: unknown) => events.emit('background:error', { error, during });
  const dispatcher = createDispatcher({
    store,
    owner,
    leadership,
    slots: new Slots(options.concurrency),
    sendable: options.sendable,
    kick: options.kick,
    nextChange: options.nextChange,
    closed,
  });

  let scheduled = false;
  function schedule(): void {
    if (scheduled || closed.stopped || !leadership.isLeader()) return;
    scheduled = true;
    runtime.sleep(COALESCE_MS, timers.signal).then(
      () => {
        scheduled = false;
        drain().catch(background('drain'));
      },
      () => undefined,
    );
  }

  /**
   * Skips `resume()` when everything is already being driven (a pass every
   * few seconds while offline must not pile up waiters).
   */
  async function drain(always = false, resumeOptions: ResumeOptions = {}): Promise<ResumeSummary> {
    if (closed.stopped || !leadership.isLeader()) return emptySummary();
    const now = runtime.now();
    let due = 0;
    for (const record of await store.list({ state: ['pending', 'in_flight'] })) {
      if (dispatcher.busy.has(record.key) || !options.sendable(record)) continue;
      if (record.lease !== undefined && record.lease.owner !== owner) {
        if (leadership.mode === 'locks') await fenceForeignLease(store, record.key, owner);
        else if (record.lease.until > now) continue;
      }
      due++;
    }
    events.emit('drain:pass', { due });
    if (due === 0 && !always) return emptySummary();
    return options.resume(resumeOptions);
  }

  async function periodic(): Promise<void> {
    while (!closed.stopped) {
      try {
        await runtime.sleep(options.intervalMs, timers.signal);
      } catch {
        return;
      }
      if (!leadership.isLeader()) continue;
      schedule();
      try {
        await options.onInterval?.();
      } catch (error) {
        background('periodic housekeeping')(error);
      }
    }
  }

  const unsubscribers = [
    options.wake(schedule),
    options.connectivity.onChange((online) => {
      if (online) schedule();
    }),
    leadership.onChange((leader) => {
      if (leader) schedule();
    }),
  ];
  const stop = (): void => {
    timers.abort();
    for (const off of unsubscribers) off();
  };
  // The browser client loads this module lazily: it may arrive after the client closed.
  if (closed.stopped) stop();
  else closed.onStop(stop);

  return {
    dispatch: dispatcher.dispatch,
    schedule,
    drain,
    start() {
      if (leadership.isLeader()) drain().catch(background('drain'));
      void periodic();
    },
  };
}
