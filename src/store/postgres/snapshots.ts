/**
 * The policy snapshots a store handle has read, each kept once: as the
 * text the database spells it, and validated and frozen.
 *
 * Every record carries the policy it was written under (`policySnapshot`,
 * some 60 objects, two thirds of the document's text), and the records of
 * one policy carry the same one. A fleet worker parsed it, walked it for
 * the depth check, froze it and serialised it again for every operation.
 * With it kept:
 *
 * - a document that holds a kept snapshot's exact text at its top level is
 *   parsed with a stand-in there (a value no stored document can hold:
 *   jsonb refuses U+0000), checked like any document (the stand-in is a
 *   valid snapshot), and given the kept object in its place. The stand-in
 *   must come back as the document's own top-level snapshot, else the text
 *   matched somewhere else (inside `meta`, say) and the document is parsed
 *   whole. Only the text decides: another text is parsed and checked in full;
 * - a record holding a kept object is written with the kept text for it.
 *
 * At most `MAX_KEPT` snapshots, the oldest dropped first.
 */

import { isPlain } from '../../model/spec.js';
import type { OperationRecord } from '../../model.js';

/** How jsonb's text spells the key, up to its value. */
const KEY = '"policySnapshot": ';
/** A valid snapshot (a dictionary of JSON) that no document read from jsonb can hold. */
const STAND_IN = '{"\\u0000": 0}';
/** Policies a worker writes under at once, and then some. */
const MAX_KEPT = 8;

interface Kept {
  /** `KEY` and the snapshot's text, as the database spells them. */
  needle: string;
  snapshot: object;
}

export class Snapshots {
  #kept: Kept[] = [];
  readonly #textOf = new WeakMap<object, string>();

  /**
   * `raw` (a document as the database spells it) parsed with a kept snapshot in place, its other fields
   * still to check; or undefined when it holds none at its top level (then parse it whole).
   */
  parse(raw: string): { value: Record<string, unknown>; snapshot: object } | undefined {
    for (const kept of this.#kept) {
      const at = raw.indexOf(kept.needle);
      if (at === -1) continue;
      let value: unknown;
      try {
        value = JSON.parse(raw.slice(0, at + KEY.length) + STAND_IN + raw.slice(at + kept.needle.length));
      } catch {
        return undefined;
      }
      return isPlain(value) && isStandIn(value.policySnapshot) ? { value, snapshot: kept.snapshot } : undefined;
    }
    return undefined;
  }

  /**
   * Keeps the top-level snapshot of `raw`, a document just parsed whole into `record` and found valid;
   * returns the kept object, to put in the record's place (or undefined when there is none to keep).
   */
  learn(raw: string, record: OperationRecord): object | undefined {
    if (record.policySnapshot === undefined) return undefined;
    const span = topLevelValue(raw, KEY);
    if (span === undefined) return undefined;
    const text = raw.slice(span[0], span[1]);
    const snapshot = deepFreeze(JSON.parse(text) as object);
    // The text found must be the record's own snapshot, or nothing is kept.
    if (JSON.stringify(snapshot) !== JSON.stringify(record.policySnapshot)) return undefined;
    this.#kept.unshift({ needle: KEY + text, snapshot });
    if (this.#kept.length > MAX_KEPT) this.#kept.pop();
    this.#textOf.set(snapshot, text);
    return snapshot;
  }

  /** `JSON.stringify(record)` of a record made of JSON values only, with a kept snapshot's text for it. */
  stringify(record: OperationRecord): string {
    const snapshot = record.policySnapshot;
    const kept = snapshot === undefined ? undefined : this.#textOf.get(snapshot);
    if (kept === undefined) return JSON.stringify(record);
    let text = '';
    for (const key in record) {
      const value = (record as unknown as Record<string, unknown>)[key];
      if (value === undefined) continue;
      text += `${text === '' ? '{' : ','}${JSON.stringify(key)}:${key === 'policySnapshot' ? kept : JSON.stringify(value)}`;
    }
    return `${text}}`;
  }
}

/** Whether `value` is the stand-in as parsed. */
function isStandIn(value: unknown): boolean {
  return isPlain(value) && value['\u0000'] === 0 && Object.keys(value).length === 1;
}

/** Freezes fresh JSON data in place, all the way down; stops at what is frozen already (a kept snapshot). */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}

/** Where the value of the top-level `key` (spelled with its quotes and colon) is in JSON text: [start, end). */
function topLevelValue(text: string, key: string): [number, number] | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      if (depth === 1 && text.startsWith(key, i)) {
        const start = i + key.length;
        const end = objectEnd(text, start);
        return end === undefined ? undefined : [start, end];
      }
      i = stringEnd(text, i);
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** The index of the quote closing the string opened at `open`. */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i;
  }
  return text.length;
}

/** The end (exclusive) of the object starting at `start`, or undefined when no object starts there. */
function objectEnd(text: string, start: number): number | undefined {
  if (text.charCodeAt(start) !== 0x7b) return undefined;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return undefined;
}
