/** `instrument`'s options are checked at once; a bad one names its field. */
import { describe, expect, it } from 'vitest';
import { createClient, InvalidOptionsError } from '../../src/index.js';
import { redactedUrl } from '../../src/opentelemetry/url.js';
import { instrument } from '../../src/opentelemetry.js';

describe('instrument options', () => {
  const client = createClient();

  it.each([
    [{ tracer: {} }, 'tracer'],
    [{ meter: { createCounter: () => undefined } }, 'meter'],
    [{ propagate: 'yes' }, 'propagate'],
    [{ propagation: true }, 'propagation'],
    [null, 'options'],
  ])('%j → InvalidOptionsError naming `%s`', (options, field) => {
    const thrown = (() => {
      try {
        instrument(client, options as never);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(InvalidOptionsError);
    expect(thrown).toMatchObject({ field });
  });

  it('refuses something that is not a client', () => {
    expect(() => instrument({} as never)).toThrow(InvalidOptionsError);
    expect(() => instrument({ on: () => () => undefined } as never)).toThrow(/`client`: must be an oncely client/);
  });
});

describe('url.full', () => {
  it.each([
    ['https://api.example.com/v1/pay?sig=abc&n=1#x', 'https://api.example.com/v1/pay?sig=REDACTED&n=REDACTED'],
    ['https://user:pw@api.example.com/', 'https://REDACTED:REDACTED@api.example.com/'],
    ['http://127.0.0.1:8080/p', 'http://127.0.0.1:8080/p'],
  ])('%s → %s', (raw, expected) => {
    expect(redactedUrl(new URL(raw))).toBe(expected);
  });
});
