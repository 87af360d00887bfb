/**
 * A long history kept bounded: the first and the latest attempts, the rest
 * summed up in `attemptsOmitted`. Needed only once an operation has made
 * `MAX_KEPT_ATTEMPTS` attempts, so it travels in the later rounds' chunk
 * (flow/drive/later-round.ts): the loop loads it before it starts the
 * attempt that needs it (drive.ts). It imports only types: what it uses of
 * decide.ts comes in the kit.
 */
import type { AttemptRecord, OmittedAttempts, OperationRecord } from '../../model.js';

import type { countsTowardMaxAttempts, mayHaveTakenEffect } from './decide.js';

/** What the trimming uses of decide.ts, handed to it. */
export interface TrimKit {
  MAX_KEPT_ATTEMPTS: number;
  countsTowardMaxAttempts: typeof countsTowardMaxAttempts;
  mayHaveTakenEffect: typeof mayHaveTakenEffect;
}

/** How `startAttempt` (transitions.ts) trims a full history: `dropOldAttempts` with its kit. */
export type Trim = (
  record: OperationRecord,
  next: AttemptRecord,
) => { kept: AttemptRecord[]; omitted: OmittedAttempts };

/** Folds the second-oldest attempts into the summary until the history fits, with `next` appended. */
export function dropOldAttempts(
  kit: TrimKit,
  record: OperationRecord,
  next: AttemptRecord,
): { kept: AttemptRecord[]; omitted: OmittedAttempts } {
  const all = [...record.attempts, next];
  const dropCount = all.length - kit.MAX_KEPT_ATTEMPTS;
  const dropped = all.splice(1, dropCount);
  const previous = record.attemptsOmitted;
  const omitted: OmittedAttempts = {
    count: (previous?.count ?? 0) + dropped.length,
    counted: previous?.counted ?? 0,
    mayHaveTakenEffect:
      previous?.mayHaveTakenEffect === true ||
      kit.mayHaveTakenEffect({ attempts: dropped, attemptsOmitted: undefined }),
    byClass: { ...previous?.byClass },
  };
  for (const a of dropped) {
    if (kit.countsTowardMaxAttempts(a)) omitted.counted++;
    const cls = a.class ?? 'open';
    omitted.byClass[cls] = (omitted.byClass[cls] ?? 0) + 1;
  }
  return { kept: all, omitted };
}
