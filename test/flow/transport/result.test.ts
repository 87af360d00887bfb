import { describe, expect, it } from 'vitest';
import {
  bodyValue,
  PARSED_KEPT_MAX,
  PARSED_KEPT_MAX_CHARS,
  parsedKeptCount,
  storedBodyFrom,
} from '../../../src/flow/transport/result.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const JSON_TYPE = 'application/json';

describe('a stored JSON result is parsed once for its first read', () => {
  it('keeps the parse made while storing and hands it to the next read, once', () => {
    const before = parsedKeptCount();
    const body = storedBodyFrom(utf8('{"id":"once-1","items":[1,2]}'), JSON_TYPE, true);
    expect(body).toEqual({ encoding: 'json', text: '{"id":"once-1","items":[1,2]}' });
    expect(parsedKeptCount()).toBe(before + 1);

    const first = bodyValue(body) as { id: string; items: number[] };
    expect(parsedKeptCount()).toBe(before);
    expect(first).toEqual({ id: 'once-1', items: [1, 2] });

    // A caller may change what it got; a later read of the same result must not see it.
    first.items.push(3);
    const second = bodyValue(body);
    expect(second).toEqual({ id: 'once-1', items: [1, 2] });
    expect(second).not.toBe(first);
  });

  it('keeps nothing unless asked (answers of stops are not read this way)', () => {
    const before = parsedKeptCount();
    storedBodyFrom(utf8('{"id":"not-kept"}'), JSON_TYPE);
    expect(parsedKeptCount()).toBe(before);
  });

  it('keeps neither broken JSON nor long texts', () => {
    const before = parsedKeptCount();
    expect(storedBodyFrom(utf8('{"id":'), JSON_TYPE, true)).toEqual({ encoding: 'text', text: '{"id":' });
    const long = JSON.stringify({ pad: 'x'.repeat(PARSED_KEPT_MAX_CHARS) });
    const body = storedBodyFrom(utf8(long), JSON_TYPE, true);
    expect(parsedKeptCount()).toBe(before);
    expect(bodyValue(body)).toEqual({ pad: 'x'.repeat(PARSED_KEPT_MAX_CHARS) });
  });

  it('stays bounded when results are stored and never read, evicting the oldest', () => {
    const bodies = Array.from({ length: PARSED_KEPT_MAX + 10 }, (_, i) =>
      storedBodyFrom(utf8(`{"unread":${i}}`), JSON_TYPE, true),
    );
    expect(parsedKeptCount()).toBe(PARSED_KEPT_MAX);
    // The oldest was evicted: reading it parses afresh, and the right value comes back either way.
    expect(bodyValue(bodies[0])).toEqual({ unread: 0 });
    expect(parsedKeptCount()).toBe(PARSED_KEPT_MAX);
    expect(bodyValue(bodies[PARSED_KEPT_MAX + 9])).toEqual({ unread: PARSED_KEPT_MAX + 9 });
    expect(parsedKeptCount()).toBe(PARSED_KEPT_MAX - 1);
    for (const body of bodies) bodyValue(body);
    expect(parsedKeptCount()).toBe(0);
  });

  it('hands out a kept null (a JSON body of null) as null', () => {
    const body = storedBodyFrom(utf8('null'), JSON_TYPE, true);
    expect(bodyValue(body)).toBeNull();
  });
});
