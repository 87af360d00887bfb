/**
 * What a red tier printed about its failure, short enough to reprint at the
 * end of `npm test`: a CI log is often read from its tail, and a failing
 * test's report scrolled out of it behind the tiers that ran after it.
 *
 * Vitest ends a red run with a section per kind of failure (`⎯⎯ Failed Tests
 * 2 ⎯⎯`, `⎯⎯ Unhandled Errors ⎯⎯`, `⎯⎯ Failed Suites 1 ⎯⎯`) followed by its
 * counts; the digest starts at the first such heading. Anything else (a
 * build or lint error) gives its last lines.
 */
import { stripVTControlCharacters } from 'node:util';

/** Lines kept per tier: enough for a few assertion diffs, few enough to keep the summary in view. */
export const DIGEST_MAX_LINES = 80;

const VITEST_FAILURE_HEADING = /^\s*⎯+\s*(Failed Tests|Failed Suites|Unhandled Errors?|Unhandled Rejection)\b/;

/** The lines of `output` that say why its command failed, at most `maxLines`, colours removed. */
export function failureDigest(output: string, maxLines = DIGEST_MAX_LINES): string[] {
  const lines = stripVTControlCharacters(output).split(/\r?\n/);
  while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
  const heading = lines.findIndex((line) => VITEST_FAILURE_HEADING.test(line));
  if (heading === -1) return lines.slice(-Math.min(maxLines, 40));
  const section = lines.slice(heading);
  if (section.length <= maxLines) return section;
  const kept = section.slice(0, maxLines - 1);
  kept.push(`… ${section.length - kept.length} more line(s) in the tier's own output above`);
  return kept;
}
