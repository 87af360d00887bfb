/**
 * The one attempt allowed past the deadline exists to learn the truth from
 * the server's replay. One cut by a kill (closed by the next owner's claim,
 * without an answer) learned nothing: it does not use up that look, and the
 * next owner asks with the same key instead of ending `unknown` although no
 * attempt ever completed (issue 28 item 12).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TAKEOVER_MARGIN_MS } from '../../src/flow/engine/lease-watch.js';
import { sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

describe('the look past the deadline, cut by a kill', () => {
  it('is made again by the next owner with the same key, and the operation ends with the truth', async () => {
    const h = await harness({ leaseMs: 2_000 });
    const now = h.rt.now();
    const deadlineAt = now - 1_000;
    await h.store.put(
      sampleRecord('late1', {
        request: { method: 'POST', url: `${h.server.url}/payments`, headers: {} },
        createdAt: now - 61_000,
        deadlineAt,
        nextAttemptAt: now,
        state: 'in_flight',
        epoch: 4,
        lease: { owner: 'killed-2', until: now - 1 },
        attempts: [
          // Cut by a kill before the deadline (closed by the claim that followed), then the look past it, cut too.
          {
            n: 1,
            owner: 'killed-1',
            startedAt: now - 30_000,
            endedAt: now - 2_000,
            class: 'ambiguous',
            sent: 'maybe',
            effect: 'unknown',
            error: 'owner killed-1 lost its lease during the attempt',
          },
          { n: 2, owner: 'killed-2', startedAt: deadlineAt + 10, sent: 'maybe' },
        ],
      }),
    );
    expect(await h.rt.run(h.client.resume())).toMatchObject({ heldElsewhere: 1 });
    await h.rt.advance(10_000 + 2_000 + TAKEOVER_MARGIN_MS);
    expect(await h.rt.run(h.client.resume())).toMatchObject({ driven: 1, succeeded: 1 });
    expect(h.server.ledger.requestsFor('late1')).toHaveLength(1);
    expect((await h.store.get('late1'))?.attempts.map((a) => a.class)).toEqual(['ambiguous', 'ambiguous', 'completed']);
  });
});
