/**
 * A response schema runs after the server completed the operation: whatever
 * the schema does (finds issues, throws, rejects, returns no result), the
 * caller gets a typed `ResponseValidationError` carrying the key, the status
 * and the raw result, saying the operation succeeded: never an untyped error,
 * which a catch-all would take for "failed, try again with a new key".
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { isOncelyError, ResponseValidationError, type StandardSchemaV1 } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

afterEach(closeAll);

const thrown = new Error('schema bug: cannot read "id"');

/** A Standard Schema whose `validate` does `behave`. */
function schemaThat(behave: () => unknown): StandardSchemaV1 {
  return { '~standard': { version: 1, vendor: 'test', validate: behave as never } };
}

/** Sends a payment under `key` whose 2xx is checked by `schema`; resolves with what `send` rejects with. */
async function sendChecked(key: string, json: unknown, schema: StandardSchemaV1) {
  const h = await harness();
  const error = await h.rt
    .run(h.client.send({ method: 'POST', url: '/payments', key, json, responseSchema: schema }))
    .catch((e: unknown) => e);
  return { h, error };
}

const misbehaving: Array<[string, () => unknown, unknown]> = [
  [
    'throws',
    () => {
      throw thrown;
    },
    thrown,
  ],
  ['rejects', () => Promise.reject(thrown), thrown],
  ['throws a non-Error', () => Promise.reject('just a string'), 'just a string'],
];

describe('a schema that fails to run is a ResponseValidationError on a succeeded operation', () => {
  it.each(misbehaving)(
    'validate %s: send rejects typed, with key, status, result and cause',
    async (_l, behave, cause) => {
      const { h, error } = await sendChecked('pay-1', { amount: 4800 }, schemaThat(behave));
      expect(isOncelyError(error)).toBe(true);
      expect(error).toBeInstanceOf(ResponseValidationError);
      const invalid = error as ResponseValidationError;
      expect(invalid).toMatchObject({ code: 'response_invalid', key: 'pay-1', state: 'succeeded', status: 201 });
      expect(invalid.cause).toBe(cause);
      expect(invalid.message).toMatch(/server completed operation pay-1/);
      expect(invalid.issues.join(' ')).toMatch(/the response schema threw/);
      expect(invalid.result.body).toMatchObject({ amount: 4800 });
      expect(invalid.attempts).toBe(1);
      // One effect at the server, recorded as succeeded: the error must not read as "not done".
      expect(h.server.ledger.requests).toHaveLength(1);
      expect((await h.client.get('pay-1'))?.state).toBe('succeeded');
    },
  );

  it('a repeat send answered from the store rejects the same way, without a request', async () => {
    const h = await harness();
    const request = {
      method: 'POST',
      url: '/payments',
      key: 'pay-2',
      json: { amount: 1 },
      responseSchema: schemaThat(() => {
        throw thrown;
      }),
    };
    await h.rt.run(h.client.send(request)).catch(() => undefined);
    const again = await h.rt.run(h.client.send(request)).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ResponseValidationError);
    expect(again).toMatchObject({ key: 'pay-2', state: 'succeeded', status: 201, cause: thrown });
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('enqueue: settled resolves with ok false and the typed error (never rejects)', async () => {
    const h = await harness();
    const { settled } = await h.client.enqueue({
      method: 'POST',
      url: '/payments',
      key: 'pay-3',
      json: { amount: 1 },
      responseSchema: schemaThat(() => Promise.reject(thrown)),
    });
    const outcome = await h.rt.run(settled);
    expect(outcome).toMatchObject({ key: 'pay-3', ok: false, state: 'succeeded' });
    expect(outcome.error).toBeInstanceOf(ResponseValidationError);
    expect(outcome.error).toMatchObject({ key: 'pay-3', status: 201, cause: thrown });
  });

  it.each([
    ['undefined', () => undefined],
    ['null', () => null],
    ['issues that are no array', () => ({ issues: 'bad' })],
  ])('validate returns no Standard Schema result (%s): typed too', async (_l, behave) => {
    const { error } = await sendChecked('pay-4', { amount: 1 }, schemaThat(behave));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toMatchObject({ key: 'pay-4', state: 'succeeded', status: 201 });
    expect((error as ResponseValidationError).issues.join(' ')).toMatch(/no Standard Schema result/);
  });

  it('a schema whose issues are found keeps its issues and has no cause', async () => {
    const { error } = await sendChecked(
      'pay-5',
      { amount: 1 },
      schemaThat(() => ({ issues: [{ message: 'id: expected string' }] })),
    );
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues).toEqual(['id: expected string']);
    expect((error as ResponseValidationError).cause).toBeUndefined();
  });

  it('the message names the field paths of the issues (a real zod schema)', async () => {
    const schema = z.object({ id: z.string(), amount: z.number(), items: z.array(z.object({ qty: z.number() })) });
    const { error } = await sendChecked('pay-6', { amount: 'x', items: [{ qty: 1 }, { qty: 'two' }] }, schema);
    expect(error).toBeInstanceOf(ResponseValidationError);
    const invalid = error as ResponseValidationError;
    expect(invalid.issues).toEqual([
      expect.stringMatching(/^data\.amount: .*expected number, received string$/),
      expect.stringMatching(/^data\.items\[1\]\.qty: .*expected number, received string$/),
    ]);
    expect(invalid.message).toContain('data.amount: ');
    expect(invalid.message).toContain('data.items[1].qty: ');
  });
});
