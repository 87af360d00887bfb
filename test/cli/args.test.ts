/** The CLI's pure parts: argument parsing and the wait lines, without a process. */
import { describe, expect, it } from 'vitest';
import { parseCli, parseHeaders, UsageError } from '../../src/cli/args.js';
import { Progress, waitLine } from '../../src/cli/progress.js';
import { sampleRecord } from '../../src/store.js';

describe('parseCli', () => {
  it('reads a command, its key and the flags', () => {
    const args = parseCli(['retry', 'k1', '--dir', 'store', '--header', 'Authorization: Bearer t', '--json']);
    expect(args).toMatchObject({
      command: 'retry',
      key: 'k1',
      dir: 'store',
      json: true,
      headers: { authorization: 'Bearer t' },
    });
  });

  it('--version and --help need no command', () => {
    expect(parseCli(['--version']).version).toBe(true);
    expect(parseCli(['-h']).help).toBe(true);
  });

  it.each([
    [['list', '--verbose'], 'unknown option --verbose'],
    [['list', '--exipred'], 'unknown option --exipred (did you mean --expired?)'],
    [['list', '--dir'], '--dir needs a value'],
    [['retry'], 'retry needs a key: oncely retry <key>'],
    [['list', 'extra'], 'unexpected argument "extra" after list'],
    [['dran'], 'unknown command "dran" (did you mean "drain"?)'],
    [['constructor'], 'unknown command "constructor"'],
    [['list', '--expired'], '--expired only applies to purge'],
  ])('%j: %s', (argv, message) => {
    expect(() => parseCli(argv)).toThrow(new UsageError(message));
  });
});

describe('parseHeaders', () => {
  it('lower-cases names and trims values; the last of a repeated name wins', () => {
    expect(parseHeaders(['X-Tenant:  a ', 'x-tenant: b', 'Authorization: Bearer t'])).toEqual({
      'x-tenant': 'b',
      authorization: 'Bearer t',
    });
  });

  it.each([[': value'], ['no colon'], ['Bad Name: x'], ['Name: a\r\nInjected: b']])('refuses %j', (line) => {
    expect(() => parseHeaders([line])).toThrow(UsageError);
  });
});

describe('what the CLI says it waits for', () => {
  it('a wait line has the time, how long from now, and why', () => {
    const at = Date.UTC(2026, 11, 1, 5, 40, 12, 345);
    expect(
      waitLine(
        { key: 'p_1', until: at, kind: 'next_attempt', reason: 'attempt 1 ended retryable: status 503' },
        at - 250,
      ),
    ).toBe('p_1: next attempt at 2026-12-01 05:40:12.345 (in 250 ms): attempt 1 ended retryable: status 503');
  });

  it('announces leases of other owners and attempts scheduled later, not its own leases or due ones', async () => {
    const now = 1_000_000;
    const lines: string[] = [];
    const progress = new Progress({
      write: (t) => lines.push(t),
      tty: false,
      quiet: false,
      bar: false,
      now: () => now,
    });
    const later = sampleRecord('later', {
      nextAttemptAt: now + 5_000,
      attempts: [{ n: 1, owner: 'o', startedAt: 1, endedAt: 2, class: 'retryable', status: 429, sent: 'definitely' }],
    });
    await progress.announce(
      [
        {
          key: 'theirs',
          state: 'in_flight',
          nextAttemptAt: now,
          createdAt: 1,
          lease: { owner: 'w-7', until: now + 3_000 },
        },
        {
          key: 'mine',
          state: 'in_flight',
          nextAttemptAt: now,
          createdAt: 1,
          lease: { owner: 'me', until: now + 3_000 },
        },
        {
          key: 'expired',
          state: 'in_flight',
          nextAttemptAt: now,
          createdAt: 1,
          lease: { owner: 'w-7', until: now - 1 },
        },
        { key: 'due', state: 'pending', nextAttemptAt: now, createdAt: 1 },
        { key: 'later', state: 'pending', nextAttemptAt: now + 5_000, createdAt: 1 },
      ],
      'me',
      async (key) => (key === 'later' ? later : undefined),
    );
    expect(progress.waits.map((w) => [w.key, w.kind, w.until - now])).toEqual([
      ['theirs', 'lease', 3_000],
      ['later', 'next_attempt', 5_000],
    ]);
    expect(lines.join('')).toContain('theirs: leased until');
    expect(lines.join('')).toContain('(in 3000 ms): leased by another owner (w-7)');
    expect(lines.join('')).toContain('later: next attempt at');
    expect(lines.join('')).toContain('(in 5000 ms): attempt 1 ended retryable 429');
  });

  it('quiet (--json) prints nothing but still collects the waits', () => {
    const lines: string[] = [];
    const progress = new Progress({ write: (t) => lines.push(t), tty: false, quiet: true, bar: true });
    progress.total = 1;
    progress.draw();
    progress.wait({ key: 'k', until: 0, kind: 'held', reason: 'held' });
    progress.step();
    expect(lines).toEqual([]);
    expect(progress.waits).toHaveLength(1);
  });
});
