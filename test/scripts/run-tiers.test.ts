/**
 * `npm test` runs every tier and reports every failure (scripts/run-tiers.ts):
 * one red tier never hides the others, and any red tier fails the whole run.
 */
import { describe, expect, it } from 'vitest';
import { runTiers } from '../../scripts/run-tiers.js';

describe('runTiers', () => {
  it('runs the tiers after a failed one, reports each, and fails the run', () => {
    const lines: string[] = [];
    const { ok, results } = runTiers(
      [
        { name: 'first', command: 'exit 3' },
        { name: 'second', command: 'test "$TIER_FLAG" = on', env: { TIER_FLAG: 'on' } },
        { name: 'third', command: 'exit 1' },
      ],
      (line) => lines.push(line),
    );
    expect(ok).toBe(false);
    expect(results.map((r) => [r.name, r.ok, r.code])).toEqual([
      ['first', false, 3],
      ['second', true, 0],
      ['third', false, 1],
    ]);
    expect(lines.at(-1)).toBe('2 tier(s) failed: first, third');
  });

  it('passes only when every tier passed', () => {
    const { ok } = runTiers([{ name: 'only', command: 'true' }], () => undefined);
    expect(ok).toBe(true);
  });
});
