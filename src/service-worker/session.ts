/**
 * One wake-up of the service worker, while it holds the drainer lock: the
 * same parts a drainer tab runs (browser/drain-loop.ts and the dispatcher,
 * the core client on the same IndexedDB queue, the tab channel), fed by
 * the worker instead of the DOM, and bounded by a time budget.
 *
 * - Passes repeat until nothing sendable is left, or the budget runs out;
 *   a page's kick (new work, a `message`) starts a pass meanwhile.
 * - When it ends, the core client closes: an attempt on the wire finishes
 *   and is recorded, waits are cut short, every lease is given back
 *   (pending, same key). Only then does the caller release the lock.
 * - A 401 with no `onUnauthorized` of the worker's own is left for a page:
 *   the operation waits here until the wake-up ends, then goes back
 *   pending with its refresh still unused, so the page's `onUnauthorized`
 *   runs when the page sends it.
 * - Every core event is relayed on the tab channel: open pages hear the
 *   worker's attempts and settlements (`subscribe`, `settled`).
 */
import { RELAYED_EVENTS } from '../browser/channel.js';
import { browserConnectivity } from '../browser/connectivity.js';
import { createDrainLoop, type DrainEvents, type DrainLoop } from '../browser/drain-loop.js';
import type { BroadcastChannelLike, NavigatorLike } from '../browser/env.js';
import type { BrowserOnlyEvents } from '../browser/events.js';
import type { Hints } from '../browser/hints.js';
import type { LeaderMode, Leadership } from '../browser/leader.js';
import { TabSync } from '../browser/tabs.js';
import { watchedFetch } from '../browser/watched-fetch.js';
import { createPlatformClient } from '../client.js';
import type { OncelyEvents } from '../events.js';
import { Shutdown } from '../flow/engine/shutdown.js';
import type { OperationRecord } from '../model.js';
import type { Runtime } from '../runtime.js';
import { loadMemoryStore } from '../store/memory-load.js';
import type { OperationStore } from '../store/store.js';
import type { DrainerSettings } from './options.js';

/** What woke the worker. */
export type WakeReason = 'sync' | 'periodicsync' | 'message' | 'call';

export interface DrainReport {
  reason: WakeReason;
  /**
   * `drained`: this worker held the drainer lock and sent what was due;
   * `busy`: a page holds the lock and drains (it was told there is work), or, with `budgetSpent`, a
   * sync found the lock taken with no page open for its whole budget (a stopped worker's, not let go);
   * `offline`: the browser says offline, nothing was tried.
   */
  outcome: 'drained' | 'busy' | 'offline';
  /** Operations this wake-up settled, by final state. */
  succeeded: number;
  failed: number;
  blocked: number;
  unknown: number;
  /** Operations still pending or in flight when it ended (a retry not yet due, the budget spent): kept, same keys. */
  left: number;
  /** Of `left`, those answered 401 and left for a page's `onUnauthorized`. */
  unauthorized: number;
  /** The budget ran out before the queue was empty. */
  budgetSpent: boolean;
  startedAt: number;
  endedAt: number;
}

export interface SessionContext {
  settings: DrainerSettings;
  store: OperationStore;
  runtime: Runtime;
  owner: string;
  navigator: NavigatorLike | undefined;
  BroadcastChannel: BroadcastChannelLike | undefined;
  /** Fired by the worker's events and pages' kicks: a pass now. */
  hints: Hints;
  user: (() => string | undefined | Promise<string | undefined>) | undefined;
  onError: (error: unknown, during: string) => void;
}

/** Between passes, when work is still being driven by a pass a kick started: how soon to look again. */
const LOOK_AGAIN_MS = 50;
/** How often the worker re-reads an operation it waits on without an announcement (rare: it is the drainer). */
const SETTLE_POLL_MS = 1_000;
/** After an attempt could not leave, the next try (a worker hears no `online` event). */
const RECHECK_MS = 1_000;

export async function drainHeld(ctx: SessionContext, reason: WakeReason, mode: LeaderMode): Promise<DrainReport> {
  const { settings, store, runtime, owner } = ctx;
  const startedAt = runtime.now();
  const closing = new Shutdown();
  const userId = ctx.user === undefined ? undefined : await ctx.user();
  const parked = new Set<string>();
  const mine = (record: OperationRecord): boolean => ctx.user === undefined || record.meta?.userId === userId;
  const counts = { succeeded: 0, failed: 0, blocked: 0, unknown: 0 };

  const tabs = new TabSync({
    BroadcastChannel: ctx.BroadcastChannel,
    database: settings.database,
    owner,
    runtime,
    settlePollMs: SETTLE_POLL_MS,
    closed: closing,
    onKick: () => ctx.hints.fire(),
    onWiped: () => undefined,
    onActivity: () => undefined,
  });
  const connectivity = browserConnectivity({ env: { navigator: ctx.navigator }, runtime, recheckMs: RECHECK_MS });
  const leadership: Leadership = {
    mode,
    isLeader: () => !closing.stopped,
    onChange: () => () => undefined,
    release: async () => undefined,
  };
  const events: DrainEvents = {
    emit: (name, payload) => {
      if (name === 'background:error') {
        const { error, during } = payload as BrowserOnlyEvents['background:error'];
        ctx.onError(error, during);
      }
    },
  };
  let loop: DrainLoop | undefined;
  const core = createPlatformClient(
    {
      ...settings.core,
      store,
      runtime,
      owner,
      fetch: watchedFetch(settings.core.fetch, () => connectivity.reportUnreachable('transport_error')),
      connectivity,
      dispatch: (key, run, signal) => {
        if (loop === undefined) throw new Error('the drain loop is not ready');
        return loop.dispatch(key, run, signal);
      },
      mayAttempt: mine,
      concurrency: Number.MAX_SAFE_INTEGER,
      // Ends only when the wake-up does: the loop then gives the operation back with its refresh unused.
      onUnauthorized:
        settings.core.onUnauthorized ??
        ((attempt) => {
          parked.add(attempt.key);
          return new Promise<void>(() => undefined);
        }),
    },
    { memoryStore: loadMemoryStore },
  );
  const drainLoop = createDrainLoop({
    store,
    runtime,
    owner,
    leadership,
    connectivity,
    wake: ctx.hints.source,
    concurrency: settings.concurrency,
    // Never reached: the loop's periodic passes are not started here.
    intervalMs: settings.budgetMs,
    sendable: (record) => mine(record) && !parked.has(record.key),
    // The worker is the drainer: nobody to tell.
    kick: () => undefined,
    nextChange: (key, signal) => tabs.nextChange(key, signal),
    resume: (options) => core.resume(options),
    events,
    closed: closing,
  });
  loop = drainLoop;
  const unsubscribers = RELAYED_EVENTS.map((name) =>
    core.on(name, (payload: OncelyEvents[typeof name]) => tabs.relay(name, payload)),
  );
  unsubscribers.push(
    core.on('attempt:ended', (event) => {
      if (event.class === 'not_sent') connectivity.reportUnreachable('not_sent');
    }),
    core.on('settled', (event) => {
      if (event.state in counts) counts[event.state as keyof typeof counts]++;
    }),
  );

  /** Sendable operations not finished (in leases mode, not counting those another live owner holds). */
  async function remaining(): Promise<OperationRecord[]> {
    const now = runtime.now();
    const live = await store.list({ state: ['pending', 'in_flight'] });
    return live.filter(
      (r) => mine(r) && (mode === 'locks' || r.lease === undefined || r.lease.owner === owner || r.lease.until <= now),
    );
  }

  const budget = new AbortController();
  let budgetSpent = false;
  const expired = runtime.sleep(settings.budgetMs, budget.signal).then(
    () => {
      budgetSpent = true;
    },
    () => undefined,
  );
  const work = (async () => {
    while (!closing.stopped) {
      await drainLoop.drain(true);
      const left = await remaining();
      if (left.every((r) => parked.has(r.key))) return;
      // Still driven by a pass a kick started, or just queued by a page: look again shortly.
      await runtime.sleep(LOOK_AGAIN_MS, budget.signal).catch(() => undefined);
    }
  })();

  try {
    await Promise.race([work, expired]);
  } finally {
    closing.stop();
    budget.abort();
    // Attempts on the wire finish and are recorded; waits end; leases go back, pending, same keys.
    await core.close();
    await work.catch((error: unknown) => ctx.onError(error, 'drain'));
    for (const off of unsubscribers) off();
    connectivity.dispose();
    tabs.close();
  }
  const left = await remaining();
  return {
    reason,
    outcome: 'drained',
    ...counts,
    left: left.length,
    unauthorized: left.filter((r) => parked.has(r.key)).length,
    budgetSpent,
    startedAt,
    endedAt: runtime.now(),
  };
}
