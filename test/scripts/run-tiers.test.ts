/**
 * `npm test` runs every tier and reports every failure (scripts/run-tiers.ts):
 * one red tier never hides the others, any red tier fails the whole run, and
 * the end of the log says why each red tier failed (scripts/failure-digest.ts).
 */
import { describe, expect, it } from 'vitest';
import { DIGEST_MAX_LINES, failureDigest } from '../../scripts/failure-digest.js';
import { runTiers } from '../../scripts/run-tiers.js';

const quiet = { stdout: () => undefined, stderr: () => undefined };

describe('runTiers', () => {
  it('runs the tiers after a failed one, reports each, and fails the run', async () => {
    const lines: string[] = [];
    const { ok, results } = await runTiers(
      [
        { name: 'first', command: 'exit 3' },
        { name: 'second', command: 'test "$TIER_FLAG" = on', env: { TIER_FLAG: 'on' } },
        { name: 'third', command: 'exit 1' },
      ],
      (line) => lines.push(line),
      quiet,
    );
    expect(ok).toBe(false);
    expect(results.map((r) => [r.name, r.ok, r.code])).toEqual([
      ['first', false, 3],
      ['second', true, 0],
      ['third', false, 1],
    ]);
    expect(lines.at(-1)).toBe('2 tier(s) failed: first, third');
  });

  it('passes only when every tier passed', async () => {
    const { ok } = await runTiers([{ name: 'only', command: 'true' }], () => undefined, quiet);
    expect(ok).toBe(true);
  });

  it('passes each tier’s output through and ends the log with why a red tier failed, after the later tiers', async () => {
    const lines: string[] = [];
    const passed: string[] = [];
    const streams = {
      stdout: (c: Buffer) => passed.push(c.toString()),
      stderr: (c: Buffer) => passed.push(c.toString()),
    };
    const failing = [
      'printf " ✓ test/a.test.ts (3 tests)\\n"',
      'printf "⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯\\n FAIL test/b.test.ts > keeps one key\\nAssertionError: expected 2 to be 1\\n"',
      'echo "  stderr line" >&2',
      'exit 1',
    ].join('; ');
    const { results } = await runTiers(
      [
        { name: 'red', command: failing },
        { name: 'later', command: 'echo a lot of later output' },
      ],
      (line) => lines.push(line),
      streams,
    );
    expect(passed.join('')).toContain('test/a.test.ts');
    expect(passed.join('')).toContain('a lot of later output');
    // Two pipes: where the standard error's line lands among the others is the event loop's choice.
    expect(results[0]?.digest.filter((line) => line !== '  stderr line')).toEqual([
      '⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯',
      ' FAIL test/b.test.ts > keeps one key',
      'AssertionError: expected 2 to be 1',
    ]);
    expect(results[0]?.digest).toContain('  stderr line');
    const why = lines.indexOf('\n━━ why red failed (its output, shortened)');
    expect(why).toBeGreaterThan(lines.indexOf('\n━━ later: echo a lot of later output'));
    expect(lines.slice(why + 1, why + 3)).toEqual(['⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯', ' FAIL test/b.test.ts > keeps one key']);
    expect(lines.indexOf('\n━━ summary')).toBeGreaterThan(why);
    expect(results[1]?.digest).toEqual([]);
  });
});

describe('failureDigest', () => {
  it('starts at vitest’s first failure heading, without colours', () => {
    const output = [
      '\u001b[32m✓\u001b[39m test/a.test.ts',
      'noise',
      '\u001b[31m⎯⎯⎯⎯⎯⎯ Unhandled Errors ⎯⎯⎯⎯⎯⎯\u001b[39m',
      'Error: socket hang up',
      '',
      ' Test Files  1 failed | 20 passed (21)',
      '',
    ].join('\n');
    expect(failureDigest(output)).toEqual([
      '⎯⎯⎯⎯⎯⎯ Unhandled Errors ⎯⎯⎯⎯⎯⎯',
      'Error: socket hang up',
      '',
      ' Test Files  1 failed | 20 passed (21)',
    ]);
  });

  it('caps a long report and says how much it left out', () => {
    const body = Array.from({ length: 500 }, (_, i) => `line ${i}`);
    const digest = failureDigest(['⎯⎯ Failed Tests 9 ⎯⎯', ...body].join('\n'));
    expect(digest).toHaveLength(DIGEST_MAX_LINES);
    expect(digest[0]).toBe('⎯⎯ Failed Tests 9 ⎯⎯');
    expect(digest.at(-1)).toBe(`… ${501 - (DIGEST_MAX_LINES - 1)} more line(s) in the tier's own output above`);
  });

  it('gives the last lines of output that is not a test runner’s (a type error, a lint finding)', () => {
    const output = Array.from({ length: 100 }, (_, i) => `src/x.ts(${i},1): error TS2322`).join('\n');
    const digest = failureDigest(output);
    expect(digest).toHaveLength(40);
    expect(digest.at(-1)).toBe('src/x.ts(99,1): error TS2322');
  });
});
