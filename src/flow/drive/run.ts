/**
 * An operation's run in this client: claim it (lease, epoch) and drive it
 * until it settles (drive.ts: the loop that sleeps, sends and writes), or,
 * when another owner holds it, wait for that owner to finish or its lease
 * to expire, then take over with the same key.
 */
import { NotFoundError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import { mayHaveTakenEffect } from '../decide/decide.js';
import { liveRule } from '../decide/policy-snapshot.js';
import { claimOutcome, type Owner } from '../decide/transitions.js';
import type { Engine } from '../engine/engine.js';
import { drive } from './drive.js';
import { interruptionError } from './interruption.js';
import { LATER_ROUND_KIT, type LaterRound, loadedLaterRound, loadLaterRound } from './later-round-load.js';
import { mayAttemptNow } from './may-attempt.js';
import { asOperationFailure } from './outcome.js';
import type { StartedAttempt } from './start-at-once.js';

export type { AttemptContext, Connectivity, Engine } from '../engine/engine.js';
export type { StartedAttempt } from './start-at-once.js';

/** A record this client has just written ahead, and the attempt it started with it, if it did. */
export interface Written {
  record: OperationRecord;
  started?: StartedAttempt | undefined;
}

/**
 * Drives operation `key` until it is terminal (or the client shuts down) and
 * resolves with the record as stored. If another owner holds it: with
 * `busy: 'wait'`, waits for that owner to finish or its lease to expire, then
 * takes over; with `busy: 'skip'`, returns the record as it is.
 */
export async function runOperation(
  engine: Engine,
  key: string,
  signal?: AbortSignal,
  busy: 'wait' | 'skip' = 'wait',
  written?: Written,
): Promise<OperationRecord> {
  let known = written;
  /** The record as this loop last knew it: what a removal meanwhile is reported with (`removedError`). */
  let lastKnown = written?.record;
  // A store that claims on its own clock (PostgreSQL's now()) is the only judge of another owner's lease.
  const onStoreClock = engine.store.claimDue !== undefined && !engine.store.inMemory(key);
  for (;;) {
    let started = known?.started;
    let record: OperationRecord | undefined;
    if (started !== undefined || isOursAndIdle(known?.record, engine.owner, engine.runtime.now())) {
      record = (known as Written).record;
    } else {
      // Ours and idle as stored: what the claim would leave as it is. Looked at only while the claim's chunk is
      // not loaded: the browser client's first send, written ahead and then driven by its drain loop, has not
      // handed the record over, and leaves without loading it.
      record = loadedLaterRound() === undefined ? await oursAndIdle(engine, key) : undefined;
      if (record === undefined) {
        // A claim is the later rounds' (claim-round.ts): the record a first send wrote ahead needs none.
        const later =
          loadedLaterRound() ?? (await loadLaterRound(engine.runtime).catch(notLoaded(engine, key, lastKnown)));
        ({ record, started } = await later
          .claimToDrive(LATER_ROUND_KIT, engine, key, signal, onStoreClock)
          .catch(async (error: unknown) => {
            throw error instanceof NotFoundError ? await removedError(engine, key, lastKnown) : error;
          }));
      }
    }
    known = undefined;
    if (record === undefined) throw await removedError(engine, key, lastKnown);
    lastKnown = record;
    const claimed = claimOutcome(record, engine.owner);
    if (claimed.kind !== 'busy') engine.leases.forget(key);
    if (claimed.kind === 'terminal') return record;
    if (claimed.kind === 'claimed') {
      const seen: { record?: OperationRecord } = {};
      const driven = await drive(engine, record, signal, started, seen);
      if (driven !== undefined) return driven.state === 'unknown' ? await reconcileStopped(engine, driven) : driven;
      lastKnown = seen.record ?? lastKnown;
    } else {
      // Someone else holds the lease: leave it to them, or look again when it would expire.
      if (busy === 'skip') return record;
      // Only a claim finds another owner: the later rounds' chunk is loaded.
      const later = loadedLaterRound() as LaterRound;
      const waited = await later.waitForOwner(LATER_ROUND_KIT, engine, key, claimed.untilMs, onStoreClock, signal);
      if ('taken' in waited) {
        known = { record: waited.taken };
        continue;
      }
      if (!waited.waited) return record;
    }
    // Shut down, or given back because the platform holds it back now (`mayAttempt`): not claimed again here.
    if (engine.shutdown.stopped || !mayAttemptNow(engine, lastKnown ?? record)) {
      const latest = await engine.store.get(key);
      if (latest === undefined) throw await removedError(engine, key, lastKnown);
      return latest;
    }
  }
}

/**
 * An operation this loop has just stopped `unknown`, under a rule with a
 * `reconcile` hook: the hook is asked at once (flow/drive/reconcile.ts,
 * through the engine, which loads it only then). The stop is already stored: a check that fails to be
 * written leaves it `unknown`, reported as an `error` event.
 */
async function reconcileStopped(engine: Engine, record: OperationRecord): Promise<OperationRecord> {
  const rule = liveRule(engine.endpoints, record);
  if (rule?.reconcile === undefined || engine.reconcileStopped === undefined) return record;
  try {
    return await engine.reconcileStopped(record, rule);
  } catch (error) {
    engine.events.emit('error', { error, event: 'reconcile' });
    return record;
  }
}

/**
 * A record this client has just written (`written`, a new operation is
 * created leased to its creator) needs no claim: `claim` would return it
 * unchanged, so reading it back from the store is skipped. Safe even if it
 * went stale meanwhile: the next write (the attempt's start, before anything
 * is sent) is fenced by owner and epoch, and a lost lease sends the loop
 * back to a real claim. (A write-ahead that also started attempt 1 needs no
 * claim either: no one else can have seen it, see flow/calls/admission.ts.)
 */
function isOursAndIdle(record: OperationRecord | undefined, owner: Owner, nowMs: number): record is OperationRecord {
  return (
    record !== undefined && record.state === 'pending' && record.lease?.owner === owner.id && record.lease.until > nowMs
  );
}

/** The record of `key` as stored, if it is ours and idle (`isOursAndIdle`): a claim would not change it. */
async function oursAndIdle(engine: Engine, key: string): Promise<OperationRecord | undefined> {
  const stored = await engine.store.get(key);
  return isOursAndIdle(stored, engine.owner, engine.runtime.now()) ? stored : undefined;
}

/**
 * The later rounds' chunk could not be loaded for a claim (a page that could
 * not fetch it): nothing was claimed, the operation stays as stored; the
 * caller hears it typed, with the key and whether it may have taken effect.
 */
function notLoaded(engine: Engine, key: string, lastKnown: OperationRecord | undefined) {
  return async (error: unknown): Promise<never> => {
    const stored = (await engine.store.get(key).catch(() => undefined)) ?? lastKnown;
    throw stored === undefined ? error : await asOperationFailure(engine, key, stored, error);
  };
}

/**
 * The error for an operation that was removed from the store (`clear()`,
 * `discard`) while a loop of this client was driving or waiting on it. It
 * says what the loop knew, and it claims nothing was done only when this
 * client alone held the operation at its last look and no attempt of it
 * may have taken effect: another owner may have sent it since it was last
 * seen otherwise. Never seen here: not found.
 */
export async function removedError(
  engine: Engine,
  key: string,
  lastKnown: OperationRecord | undefined,
): Promise<Error> {
  if (lastKnown === undefined) return new NotFoundError(key);
  const maybe = mayHaveTakenEffect(lastKnown) || lastKnown.lease?.owner !== engine.owner.id;
  return interruptionError(engine.runtime, { kind: 'removed', key, record: lastKnown, maybe });
}
