/**
 * `resume()` streams outcomes and resolves with counts: `onOutcome` sees
 * each operation once with how it ended, and the summary counts add up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/flow/engine/lease-watch.js';
import type { OperationRecord, Outcome } from '../../src/index.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, type Harness, harness } from '../helpers/harness.js';

afterEach(closeAll);

/** A stored operation the client has not driven yet, sent to the harness server. */
function stored(h: Harness, key: string, overrides: Partial<OperationRecord> = {}): Promise<void> {
  const now = h.rt.now();
  return h.store.put(
    sampleRecord(key, {
      request: {
        method: 'POST',
        url: `${h.server.url}/payments`,
        headers: { 'content-type': 'application/json' },
        body: { encoding: 'json', text: JSON.stringify({ key }) },
      },
      createdAt: now,
      deadlineAt: now + 60_000,
      nextAttemptAt: now,
      ...overrides,
    }),
  );
}

/** An `onOutcome` that keeps what it is given. */
function collector(): { outcomes: Outcome[]; onOutcome: (outcome: Outcome) => void } {
  const outcomes: Outcome[] = [];
  return { outcomes, onOutcome: (outcome) => void outcomes.push(outcome) };
}

describe('resume({ onOutcome }) and its summary', () => {
  it('calls onOutcome once per operation with its final outcome, and counts each final state', async () => {
    const h = await harness(
      { policy: { maxAttempts: 1 } },
      {
        handle: (req) =>
          (req.body as { key?: string }).key === 'bad' ? { status: 422, body: {} } : { status: 201, body: {} },
      },
    );
    const before = h.rt.now();
    // Its owner vanished mid-attempt, and the deadline passed: it may have taken effect. A lease is taken
    // over only once watched unchanged for attempt timeout + lease + margin (flow/engine/lease-watch.ts):
    // a first pass sees it, and the pass below comes after that watch.
    await stored(h, 'maybe', {
      state: 'in_flight',
      deadlineAt: before - 1,
      epoch: 1,
      lease: { owner: 'vanished', until: before - 1 },
      attempts: [{ n: 1, owner: 'vanished', startedAt: before - 5_000, sent: 'maybe' }],
    });
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 0, heldElsewhere: 1 });
    await h.rt.advance(10_000 + 30_000 + TAKEOVER_MARGIN_MS);
    const now = h.rt.now();
    await stored(h, 'ok-1');
    await stored(h, 'ok-2');
    await stored(h, 'bad');
    // Its deadline passed before any attempt: nothing can have been sent.
    await stored(h, 'late', { deadlineAt: now - 1 });
    // Another live owner holds it: not this pass's to drive.
    await stored(h, 'held', {
      state: 'in_flight',
      epoch: 1,
      lease: { owner: 'live-tab', until: now + 30_000 },
      attempts: [{ n: 1, owner: 'live-tab', startedAt: now, sent: 'maybe' }],
    });

    const { outcomes, onOutcome } = collector();
    const summary = await h.rt.run(h.client.resume({ onOutcome }));

    expect(summary).toEqual({
      driven: 5,
      succeeded: 3,
      failed: 1,
      blocked: 1,
      unknown: 0,
      unfinished: 0,
      heldElsewhere: 1,
      heldUntil: now + 30_000,
    });
    expect(outcomes.map((o) => o.key).sort()).toEqual(['bad', 'late', 'maybe', 'ok-1', 'ok-2']);
    const byKey = new Map(outcomes.map((o) => [o.key, o]));
    expect(byKey.get('ok-1')).toMatchObject({ ok: true, state: 'succeeded', result: { status: 201, attempts: 1 } });
    expect(byKey.get('ok-2')).toMatchObject({ ok: true, state: 'succeeded' });
    expect(byKey.get('bad')).toMatchObject({ ok: false, state: 'blocked', error: { status: 422 } });
    expect(byKey.get('late')).toMatchObject({ ok: false, state: 'failed', error: { reason: 'deadline' } });
    // Taken over past its deadline: one attempt with its key settles the truth (here the first never arrived).
    expect(byKey.get('maybe')).toMatchObject({ ok: true, state: 'succeeded', result: { attempts: 2 } });
    expect(h.server.ledger.requestsFor('maybe')).toHaveLength(1);
    // Each outcome carries the record as stored when it settled.
    for (const outcome of outcomes) expect(outcome.record).toEqual(await h.store.get(outcome.key));
    expect((await h.store.get('held'))?.lease?.owner).toBe('live-tab');
  });

  it('counts operations it lets go of unfinished (the client closed mid-pass); they stay stored', async () => {
    const h = await harness({ policy: { backoff: { jitter: 'none', baseDelayMs: 5_000 } } });
    h.server.script({ kind: 'status', status: 503 });
    await stored(h, 'slow');
    await stored(h, 'fast');
    const { outcomes, onOutcome } = collector();
    const retrying = new Promise<void>((resolve) => h.client.on('retry:scheduled', () => resolve()));
    const pass = h.client.resume({ onOutcome });
    await h.rt.run(retrying);
    await h.client.close();
    const summary = await pass;
    expect(summary).toEqual({
      driven: 2,
      succeeded: 1,
      failed: 0,
      blocked: 0,
      unknown: 0,
      unfinished: 1,
      heldElsewhere: 0,
    });
    const unfinished = outcomes.filter((o) => !o.ok);
    expect(unfinished).toHaveLength(1);
    expect(unfinished[0]?.state).toBe('pending');
    expect((await h.store.get(unfinished[0]?.key ?? ''))?.state).toBe('pending');
  });

  it('an empty store: nothing driven, onOutcome never called', async () => {
    const h = await harness();
    const { outcomes, onOutcome } = collector();
    expect(await h.client.resume({ onOutcome })).toEqual({
      driven: 0,
      succeeded: 0,
      failed: 0,
      blocked: 0,
      unknown: 0,
      unfinished: 0,
      heldElsewhere: 0,
    });
    expect(outcomes).toEqual([]);
  });

  it('awaits an async onOutcome before resolving', async () => {
    const h = await harness();
    for (const key of ['a1', 'a2', 'a3']) await stored(h, key);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handled: string[] = [];
    let calls = 0;
    let resolved = false;
    const pass = h.client
      .resume({
        onOutcome: async (outcome) => {
          calls++;
          await gate;
          handled.push(outcome.key);
        },
      })
      .then((summary) => {
        resolved = true;
        return summary;
      });
    // Every operation settles, but the pass waits for its handlers.
    let settled = 0;
    await h.rt.run(
      new Promise<void>((resolve) =>
        h.client.on('settled', () => {
          if (++settled === 3) resolve();
        }),
      ),
    );
    // Everything the pass could do without its handlers is done (the engine is idle),
    // and each handler was called: the pass had its chance to resolve, and did not.
    await h.rt.advance(0);
    expect(calls).toBe(3);
    expect(resolved).toBe(false);
    release();
    expect((await h.rt.run(pass)).succeeded).toBe(3);
    expect(handled.sort()).toEqual(['a1', 'a2', 'a3']);
  });

  it('a throwing onOutcome does not stop the pass; resume rejects with its error afterwards', async () => {
    const h = await harness({ concurrency: 1 });
    for (const key of ['t1', 't2', 't3']) await stored(h, key);
    const seen: string[] = [];
    const failure = new Error('handler broke');
    const pass = h.client.resume({
      onOutcome: (outcome) => {
        seen.push(outcome.key);
        if (seen.length === 1) throw failure;
      },
    });
    await expect(h.rt.run(pass)).rejects.toBe(failure);
    expect(seen.sort()).toEqual(['t1', 't2', 't3']);
    for (const key of ['t1', 't2', 't3']) {
      expect((await h.store.get(key))?.state).toBe('succeeded');
      expect(h.server.ledger.effectCount(key)).toBe(1);
    }
  });
});
