/**
 * The packed list a resume pass drives from gives back every key and scope,
 * in order, including past its first buffers and for non-ASCII keys.
 */
import { describe, expect, it } from 'vitest';
import { DriveList, utf8Length } from '../../../src/flow/calls/drive-list.js';
import { pool } from '../../../src/flow/calls/resume-order.js';

describe('DriveList', () => {
  it('returns each key and scope in the order pushed, across buffer growth', () => {
    const items = Array.from({ length: 5_000 }, (_, i) => ({
      key: `0b6c1f6f-3b2d-4c7a-9a3e-${i.toString(16).padStart(12, '0')}`,
      scope: i % 7 === 0 ? `cart-${i % 3}` : undefined,
    }));
    const list = DriveList.from(items);
    expect(list.length).toBe(5_000);
    expect([...list]).toEqual(items);
    expect(list.at(4_999)).toEqual(items[4_999]);
    expect(list.at(5_000)).toBeUndefined();
    expect(list.at(-1)).toBeUndefined();
  });

  it('keeps keys of any Unicode text, and an empty list is empty', () => {
    const keys = ['paiement-été', '注文-42', 'emoji-🧾-1', 'a'.repeat(2_000)];
    const list = DriveList.from(keys.map((key) => ({ key })));
    expect([...list].map((item) => item.key)).toEqual(keys);
    expect([...list].every((item) => item.scope === undefined)).toBe(true);
    expect([...new DriveList()]).toEqual([]);
  });

  it('measures UTF-8 as TextEncoder writes it, lone surrogates included', () => {
    const texts = ['', 'a', 'é', '注', '🧾', 'x\ud800', '\ud800y', '\udc00', '\ud83e\uddfe\ud83e', 'paiement-été-🧾'];
    for (const text of texts) expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
  });

  it('packs an array into buffers of exactly its size, and an iterable by growing', () => {
    const keys = ['k-🧾-1', 'lone-\ud800', 'été', 'a'.repeat(5_000)];
    const fromArray = DriveList.from(keys.map((key) => ({ key })));
    const fromIterable = DriveList.from(new Set(keys.map((key) => ({ key }))));
    // What TextDecoder makes of the bytes written for a lone surrogate: U+FFFD.
    const expected = keys.map((key) => new TextDecoder().decode(new TextEncoder().encode(key)));
    expect([...fromArray].map((item) => item.key)).toEqual(expected);
    expect([...fromIterable].map((item) => item.key)).toEqual(expected);
    // Packed exactly: pushing one more key past the measured size still works (the buffers grow).
    fromArray.push('one-more', 'scope');
    expect(fromArray.at(keys.length)).toEqual({ key: 'one-more', scope: 'scope' });
  });

  it('pool takes items as slots free up, never more than the limit at once', async () => {
    const list = DriveList.from(Array.from({ length: 20 }, (_, i) => ({ key: `k${i}` })));
    let running = 0;
    let most = 0;
    const done: string[] = [];
    await pool(list, 3, async (item) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      done.push(item.key);
      running--;
    });
    expect(most).toBe(3);
    expect(done.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`).sort());
  });
});
