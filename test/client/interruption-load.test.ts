/**
 * What the error of an interrupted operation says (flow/drive/interruption-texts.ts)
 * is loaded with `import()` the first time one is: a first send that
 * settles never loads it. The verdict is made before, from the record: when
 * the texts cannot load (a chunk the page could not fetch), the caller gets
 * the same `OperationError`, the same key, state and `mayHaveTakenEffect`,
 * in shorter words; once they load, the full texts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore, OperationError } from '../../src/index.js';
import { STORED_REMEDIATION } from '../../src/model/remediation.js';
import { forwardingStore } from '../helpers/forwarding-store.js';
import { closeAll, harness } from '../helpers/harness.js';
import { loadError, loadsAtFirstSend } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/drive/interruption-texts.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'interruption-texts.js', importOriginal),
);

afterEach(closeAll);

describe('the texts of an interrupted operation', () => {
  it('are not loaded by a send that settles; without them the verdict is the same, in shorter words', async () => {
    const inner = memoryStore();
    let failWrites = false;
    const flaky = forwardingStore(inner, {
      update: (k, fn) =>
        failWrites ? Promise.reject(new Error('ENOSPC: no space left on device')) : inner.update(k, fn),
    });
    const h = await harness({ store: flaky }, { handle: () => ({ status: 201, body: { ok: true } }) });
    expect(await loadsAtFirstSend(h.client, h.rt, load, 'ok-1')).toEqual([0]);

    // The store fails once the request has left: the answer cannot be recorded.
    const interrupted = async (key: string): Promise<OperationError> => {
      const hold = h.server.hold();
      const pending = h.client.send({ method: 'POST', url: '/payments', key, json: {} }).catch((e: unknown) => e);
      await h.rt.run(hold.arrived);
      failWrites = true;
      hold.release();
      const error = (await h.rt.run(pending)) as OperationError;
      failWrites = false;
      return error;
    };

    load.failuresLeft = 1;
    const short = await interrupted('e1');
    expect(load.attempts).toBe(1);
    expect(short).toBeInstanceOf(OperationError);
    expect(short).toMatchObject({ key: 'e1', state: 'in_flight', mayHaveTakenEffect: true });
    expect(short.message).toBe('Operation e1 could not be driven (in_flight): ENOSPC: no space left on device');
    expect(short.remediation).toBe(STORED_REMEDIATION);
    expect(short.cause).toMatchObject({ message: 'ENOSPC: no space left on device' });

    const full = await interrupted('e2');
    expect(load.attempts).toBe(2);
    expect(full).toMatchObject({ key: 'e2', state: 'in_flight', mayHaveTakenEffect: true });
    expect(full.message).toBe(
      'Operation e2 may have taken effect: an attempt may have reached the server before this failed: ENOSPC: no space left on device',
    );
    expect(full.remediation).toMatch(
      /^It may have taken effect; it stays stored: resume\(\) finishes it with the same key/,
    );
    expect(loadError(full.cause)).toBeUndefined();
    // Each was sent once and stays stored for resume() with its key.
    expect(h.server.ledger.requestsFor('e1')).toHaveLength(1);
    expect((await inner.get('e2'))?.state).toBe('in_flight');
  });
});
