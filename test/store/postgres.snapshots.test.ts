/**
 * The policy snapshots a PostgreSQL store handle keeps (snapshots.ts, no
 * database): a document holding a kept snapshot's exact text at its top
 * level is read with the kept object in its place, and nothing else is.
 */
import { describe, expect, it } from 'vitest';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store/contract.js';
import { checkDocument, forWrite } from '../../src/store/postgres/rows.js';
import { Snapshots } from '../../src/store/postgres/snapshots.js';

/** JSON text as jsonb spells it: keys by length then bytes, a space after each colon and comma. */
function jsonb(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonb).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonb((value as Record<string, unknown>)[k])}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

const policy = { attemptTimeoutMs: 5_000, profile: { statuses: { '409': 'in_progress' }, notApplied: [408, 425] } };
const record = (key: string, overrides: Partial<OperationRecord> = {}) =>
  sampleRecord(key, { policySnapshot: policy, ...overrides });

function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

describe('policy snapshots kept by a PostgreSQL store handle', () => {
  it('the documents of one policy are read with one frozen snapshot, each equal to its text', () => {
    const snapshots = new Snapshots();
    const first = checkDocument('a', jsonb(record('a')), snapshots);
    const second = checkDocument('b', jsonb(record('b', { state: 'in_flight' })), snapshots);
    if (!first.ok || !second.ok) throw new Error('both documents are valid');
    expect(second.record.policySnapshot).toBe(first.record.policySnapshot);
    expect(deeplyFrozen(second.record.policySnapshot)).toBe(true);
    expect(second.record).toEqual(record('b', { state: 'in_flight' }));
    expect(second.exact).toBe(true);
  });

  it('the kept text found inside `meta`, not at the top level, is not taken for the document’s snapshot', () => {
    const snapshots = new Snapshots();
    checkDocument('a', jsonb(record('a')), snapshots);
    const other = { attemptTimeoutMs: 9_000 };
    // meta sorts before policySnapshot: the kept text comes first, nested.
    const tricky = record('b', { meta: { x: { policySnapshot: policy } }, policySnapshot: other });
    const text = jsonb(tricky);
    expect(text.indexOf(`"policySnapshot": ${jsonb(policy)}`)).toBeLessThan(text.indexOf(jsonb(other)));
    const checked = checkDocument('b', text, snapshots);
    expect(checked.ok && checked.record).toEqual(tricky);
  });

  it('a document with the kept snapshot is still checked whole: a bad field elsewhere is named', () => {
    const snapshots = new Snapshots();
    checkDocument('a', jsonb(record('a')), snapshots);
    const checked = checkDocument('b', jsonb({ ...record('b'), state: 'done' }), snapshots);
    expect(checked.ok).toBe(false);
    expect(!checked.ok && checked.problems.join()).toMatch(/^state/);
    // Under another key than its own: refused too.
    expect(checkDocument('c', jsonb(record('b')), snapshots).ok).toBe(false);
  });

  it('a record holding a kept snapshot is written with its kept text, and reads back equal', () => {
    const snapshots = new Snapshots();
    const read = checkDocument('a', jsonb(record('a')), snapshots);
    if (!read.ok) throw new Error('valid');
    const from = Object.freeze({ ...read.record });
    const next = { ...from, state: 'succeeded' as const, retainUntil: 9_000 };
    const { text, record: kept } = forWrite(next, from, snapshots);
    expect(text).toContain(`"policySnapshot":${jsonb(policy)}`);
    expect(JSON.parse(text)).toEqual(next);
    expect(kept.policySnapshot).toBe(read.record.policySnapshot);
  });

  it('a snapshot not kept is written as JSON.stringify writes it', () => {
    const from = Object.freeze(record('a'));
    const next = { ...from, state: 'succeeded' as const };
    expect(forWrite(next, from, new Snapshots()).text).toBe(JSON.stringify(next));
  });
});
