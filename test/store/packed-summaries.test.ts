/**
 * The packed forms a resume pass lists and orders from (packed-strings.ts,
 * packed-summaries.ts): every string and summary comes back as it went in,
 * strings compare as JS strings do, and the packed order is the order
 * `listSummaries` gives.
 */
import { describe, expect, it } from 'vitest';
import { writeOrder } from '../../src/model.js';
import { earliestFirst } from '../../src/store/file/scan.js';
import { PackedStrings } from '../../src/store/packed-strings.js';
import { PackedSummaries } from '../../src/store/packed-summaries.js';
import { type RecordSummary, summaryOf } from '../../src/store/store.js';
import { sampleRecord } from '../../src/store.js';

/** A small deterministic generator (no machine randomness in tests). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

const ALPHABET = ['a', 'b', 'z', '0', '9', '-', 'é', 'ÿ', '注', '\uffef', '🧾', '\ue000'];

function strings(count: number, random: () => number): string[] {
  return Array.from({ length: count }, () => {
    const length = Math.floor(random() * 6);
    let text = 'k';
    for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
    return text;
  });
}

describe('PackedStrings', () => {
  it('gives back every string, and compares as `<` compares JS strings (UTF-16 order, not UTF-8)', () => {
    const random = seeded(7);
    const texts = strings(600, random);
    const packed = PackedStrings.of(texts);
    expect(Array.from({ length: packed.length }, (_, i) => packed.at(i))).toEqual(texts);
    expect(packed.at(texts.length)).toBeUndefined();
    for (let n = 0; n < 3_000; n++) {
      const i = Math.floor(random() * texts.length);
      const j = Math.floor(random() * texts.length);
      const [a, b] = [texts[i] as string, texts[j] as string];
      expect(Math.sign(packed.compare(i, j)), `${a} vs ${b}`).toBe(a < b ? -1 : a > b ? 1 : 0);
    }
    // U+E000 sorts below U+1F9FE in UTF-8 but above its surrogates in UTF-16: the JS order wins.
    const pair = PackedStrings.of(['k\ue000', 'k🧾']);
    expect(Math.sign(pair.compare(0, 1))).toBe(1);
  });

  it('grows past its first buffers, and copies strings from another list as they are', () => {
    const texts = strings(5_000, seeded(3));
    const grown = new PackedStrings(1, 1);
    for (const text of texts) grown.push(text);
    const copied = new PackedStrings();
    for (let i = texts.length - 1; i >= 0; i--) copied.pushFrom(grown, i);
    expect(Array.from({ length: copied.length }, (_, i) => copied.at(i))).toEqual([...texts].reverse());
    expect(copied.byteLength).toBe(grown.byteLength);
  });
});

describe('PackedSummaries', () => {
  const records = Array.from({ length: 400 }, (_, i) =>
    sampleRecord(`op-${(i * 7919) % 400}`, {
      state: i % 5 === 0 ? 'in_flight' : 'pending',
      // Many ties on due time and creation order: the key decides those, as in listSummaries.
      nextAttemptAt: 1_000 + (i % 9),
      createdAt: 500 + (i % 4),
      ...(i % 3 === 0 ? { seq: 500_000 + (i % 5) } : {}),
      ...(i % 11 === 0 ? { scope: `cart-${i % 2}` } : {}),
      ...(i % 13 === 0 ? { epoch: 1, lease: { owner: 'other', until: 9_000 + i } } : {}),
      ...(i % 17 === 0 ? { retainUntil: 77_000 } : {}),
    }),
  );

  it('gives back the summary of every record it was given', () => {
    const packed = new PackedSummaries();
    for (const record of records) packed.add(record);
    expect(packed.length).toBe(records.length);
    records.forEach((record, i) => {
      expect(packed.at(i)).toEqual(summaryOf(record));
      expect(packed.scopeAt(i)).toBe(record.scope);
    });
    expect(packed.at(records.length)).toBeUndefined();
  });

  it('orders as listSummaries does: earliest due, then oldest, then by key', () => {
    const summaries: RecordSummary[] = records.map(summaryOf);
    const packed = PackedSummaries.of(summaries);
    const order = Array.from(packed.earliestFirst(writeOrder), (i) => summaries[i]?.key);
    expect(order).toEqual(earliestFirst([...summaries], undefined).map((s) => s.key));
  });
});
