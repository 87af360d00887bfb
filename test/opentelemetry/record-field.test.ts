/**
 * The record's `trace` field: checked like the rest of the record (a bad
 * one is named by its path), and a `creating` listener cannot store a
 * malformed one (the record would then fail its check on every read).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRecord, sampleRecord } from '../../src/store.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const TRACE = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', flags: 1 };

describe('the trace field', () => {
  it('is kept when valid and named by its path when not', () => {
    const good = parseRecord(sampleRecord('t1', { trace: TRACE }));
    expect(good.ok && good.record.trace).toEqual(TRACE);
    const bad = parseRecord({ ...sampleRecord('t2'), trace: { ...TRACE, traceId: 'XYZ', flags: -1 } });
    expect(bad.ok ? [] : bad.problems).toEqual([
      'trace.traceId: expected 32 lowercase hex digits',
      'trace.flags: expected an integer >= 0',
    ]);
  });

  it('a malformed context given at creation is not stored; a valid one is', async () => {
    const h = await harness();
    let given: unknown = { traceId: 'not-hex', spanId: '00f067aa0ba902b7', flags: 1 };
    h.client.on('creating', (payload) => {
      payload.trace = given as typeof TRACE;
    });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'bad', json: {} }));
    expect((await h.client.get('bad'))?.trace).toBeUndefined();
    given = TRACE;
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'good', json: {} }));
    expect((await h.client.get('good'))?.trace).toEqual(TRACE);
    // The settled event carries it too, for a span resumed elsewhere to link to.
    const settled = h.events.filter((e) => e.name === 'settled').map((e) => (e.payload as { trace?: unknown }).trace);
    expect(settled).toEqual([undefined, TRACE]);
  });
});
