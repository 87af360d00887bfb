/**
 * The quarantine of a file store: files at record names that fail
 * validation (torn, garbage, another key's record, or not a regular file at
 * all) are moved into `quarantine/` as `<at>-<token>-<name>`, reported to
 * this handle's listeners, and listed by `quarantined()`. Never deleted:
 * principle 6, nothing is silently dropped.
 */
import { join } from 'node:path';
import type { QuarantineEntry } from '../store.js';
import { type DirSync, moveDurably } from './durable.js';
import { type FileRead, readRegular } from './io.js';
import { check, idOf } from './record-file.js';
import { randomToken } from './token.js';

/** What was found at a record name: its text, or something that is not a regular file. */
export type Found = { kind: 'text'; text: string } | { kind: 'odd'; type: string };

/** The problem reported for something at a record name that is not a regular file. */
function oddProblem(found: { type: string }): string {
  return `not a regular file but a ${found.type}: moved aside without reading it`;
}

const QUARANTINED_NAME = /^(\d+)-[0-9a-f]+-(.+)$/;

export class Quarantine {
  readonly #records: DirSync;
  readonly #quarantine: DirSync;
  readonly #now: () => number;
  readonly #listeners: ReadonlySet<(entry: QuarantineEntry) => void>;

  /** `listeners` are the store handle's `onQuarantine` subscribers (kept by the handle, which outlives this). */
  constructor(
    records: DirSync,
    quarantine: DirSync,
    now: () => number,
    listeners: ReadonlySet<(entry: QuarantineEntry) => void>,
  ) {
    this.#records = records;
    this.#quarantine = quarantine;
    this.#now = now;
    this.#listeners = listeners;
  }

  /**
   * Moves the record file `name` aside (the caller holds its claim) and
   * reports it; nothing is reported when it was gone already.
   */
  async move(name: string, found: Found, problems?: readonly string[]): Promise<void> {
    const at = this.#now();
    if (!(await moveDurably(this.#records, name, this.#quarantine, `${at}-${randomToken()}-${name}`))) return;
    const raw = found.kind === 'text' ? found.text : '';
    this.#notify({ id: idOf(name, raw), problems: problems ?? problemsOf(name, found), at, raw });
  }

  /** Everything in the quarantine directory, oldest first (moved there by any handle). */
  async list(names: readonly string[]): Promise<QuarantineEntry[]> {
    const entries: QuarantineEntry[] = [];
    for (const file of names) {
      const match = QUARANTINED_NAME.exec(file);
      if (match === null) continue;
      const [, at, name = ''] = match;
      let read: FileRead;
      try {
        read = readRegular(join(this.#quarantine.path, file));
      } catch {
        continue;
      }
      if (read.kind === 'missing') continue;
      const found: Found = read;
      const raw = found.kind === 'text' ? found.text : '';
      entries.push({ id: idOf(name, raw), problems: problemsOf(name, found, true), at: Number(at), raw });
    }
    return entries.sort((a, b) => a.at - b.at);
  }

  #notify(entry: QuarantineEntry): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(entry);
      } catch (error) {
        // A failing report must not break the store for every other record.
        process.emitWarning(`oncely: an onQuarantine listener threw: ${String(error)}`);
      }
    }
  }
}

function problemsOf(name: string, found: Found, listing = false): readonly string[] {
  if (found.kind === 'odd') return [oddProblem(found)];
  const checked = check(name, found.text);
  if (!checked.ok) return checked.problems;
  return listing ? ['passes validation now (quarantined by another version?)'] : [];
}
