/**
 * The provider's id read from an attempt's answer: the default reads a
 * non-2xx JSON body's string `id` (and parses nothing else), a rule's extractor
 * sees every answer, and neither can break the attempt.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptOutput } from '../../../src/flow/drive/attempt.js';
import { providerIdOf } from '../../../src/flow/drive/provider-id.js';

const encoder = new TextEncoder();

function answer(status: number, body: string | undefined, type = 'application/json'): AttemptOutput {
  const bytes = body === undefined ? undefined : encoder.encode(body);
  return {
    observation: { kind: 'response', status, header: () => null, text: body ?? '' },
    headers: { 'content-type': type },
    bytes,
  };
}

describe('providerIdOf', () => {
  it.each([
    // A 2xx is kept whole as the result (its id with it): the default parses nothing more on that path.
    ['a 201 with an id', answer(201, '{"id":"pi_1","amount":4800}'), undefined],
    ['a 409 naming the payment', answer(409, '{"id":"pi_1","amount":4800}'), 'pi_1'],
    ['a 500 naming the payment', answer(500, '{"id":"pi_2","error":"internal"}'), 'pi_2'],
    ['problem+json', answer(502, '{"id":"evt_3"}', 'application/problem+json'), 'evt_3'],
    ['an id that is not a string', answer(500, '{"id":42}'), undefined],
    ['an empty id', answer(500, '{"id":""}'), undefined],
    ['an id nested, not at the top', answer(500, '{"data":{"id":"x"}}'), undefined],
    ['no body', answer(204, undefined), undefined],
    ['text', answer(500, 'id: pi_4', 'text/plain'), undefined],
    ['broken JSON', answer(500, '{"id":"pi_5"', 'application/json'), undefined],
    ['a body over 16 KiB', answer(500, JSON.stringify({ id: 'pi_6', pad: 'x'.repeat(16_384) })), undefined],
  ])('by default: %s', (_, output, id) => {
    expect(providerIdOf(output, undefined)).toBe(id);
  });

  it('is undefined for an attempt without an answer', () => {
    const output: AttemptOutput = {
      observation: { kind: 'transport_error', sent: 'maybe', code: 'ECONNRESET', message: 'reset' },
      headers: {},
      bytes: undefined,
    };
    expect(providerIdOf(output, () => 'never')).toBeUndefined();
  });

  it("gives a rule's extractor the status, headers and body (JSON parsed, text as text), and bounds what it returns", () => {
    const seen: unknown[] = [];
    const read = (a: { status: number; headers: Record<string, string>; data: unknown }) => {
      seen.push(a);
      return (a.data as { error?: { payment_intent?: string } })?.error?.payment_intent;
    };
    expect(providerIdOf(answer(402, '{"error":{"payment_intent":"pi_7"}}'), read)).toBe('pi_7');
    expect(seen[0]).toEqual({
      status: 402,
      headers: { 'content-type': 'application/json' },
      data: { error: { payment_intent: 'pi_7' } },
    });
    expect(providerIdOf(answer(200, 'ok', 'text/plain'), (a) => `t:${String(a.data)}`)).toBe('t:ok');
    expect(providerIdOf(answer(200, '{}'), () => 'x'.repeat(1_000))).toHaveLength(256);
  });

  it('an extractor that throws, or returns no string, learns nothing', () => {
    expect(
      providerIdOf(answer(201, '{"id":"pi_8"}'), () => {
        throw new Error('boom');
      }),
    ).toBeUndefined();
    expect(providerIdOf(answer(201, '{"id":"pi_8"}'), () => 7 as unknown as string)).toBeUndefined();
  });
});
