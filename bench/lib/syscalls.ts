/**
 * System calls per whole operation of the file store, counted with
 * `strace -f` (Linux; skipped where strace is missing: CI need not have it).
 *
 * The child (file-ops-child.ts) runs twice, with `small` and `large`
 * operations, and the figures are the difference divided by the difference
 * of operations: start-up (loading modules, creating the store) drops out.
 * Counted: disk flushes (`fsync`, `fdatasync`) and directory changes
 * (`openat` with `O_CREAT`, `link`, `rename`, `unlink`), then every file
 * system call (reads, stats, writes and closes included).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACED = [
  'fsync',
  'fdatasync',
  'openat',
  'open',
  'link',
  'linkat',
  'rename',
  'renameat',
  'renameat2',
  'unlink',
  'unlinkat',
  'read',
  'pread64',
  'write',
  'pwrite64',
  'close',
  'statx',
  'newfstatat',
  'fstat',
  'lstat',
  'stat',
  'futimesat',
  'utimensat',
];

export interface SyscallsPerOperation {
  fsync: number;
  fdatasync: number;
  /** Files created (`openat` with `O_CREAT`). */
  creates: number;
  links: number;
  renames: number;
  unlinks: number;
  /** Every traced call (file system calls, and writes/reads on sockets and event fds). */
  all: number;
}

export function straceAvailable(): boolean {
  return spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
}

function count(lines: string[]): SyscallsPerOperation {
  const out: SyscallsPerOperation = { fsync: 0, fdatasync: 0, creates: 0, links: 0, renames: 0, unlinks: 0, all: 0 };
  for (const line of lines) {
    // `PID name(args...` starts a call; `<... name resumed>` lines continue one already counted.
    const match = /^\d+\s+([a-z0-9_]+)\(/.exec(line);
    if (match === null) continue;
    const name = match[1] ?? '';
    out.all++;
    if (name === 'fsync') out.fsync++;
    else if (name === 'fdatasync') out.fdatasync++;
    else if ((name === 'openat' || name === 'open') && line.includes('O_CREAT')) out.creates++;
    else if (name === 'link' || name === 'linkat') out.links++;
    else if (name.startsWith('rename')) out.renames++;
    else if (name === 'unlink' || name === 'unlinkat') out.unlinks++;
  }
  return out;
}

function traceRun(childPath: string, url: string, operations: number, inFlight: number): SyscallsPerOperation {
  const dir = fs.mkdtempSync(join(tmpdir(), 'oncely-strace-'));
  const out = join(dir, 'trace.txt');
  try {
    const result = spawnSync(
      'strace',
      [
        '-f',
        '-qq',
        '-e',
        `trace=${TRACED.join(',')}`,
        '-o',
        out,
        process.execPath,
        '--import',
        'tsx',
        childPath,
        url,
        join(dir, 'store'),
        String(operations),
        String(inFlight),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (result.status !== 0) throw new Error(`traced child failed: ${result.stderr}`);
    return count(fs.readFileSync(out, 'utf8').split('\n'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Calls per operation at `inFlight`, from runs of `small` and `large` operations. */
export function syscallsPerOperation(
  url: string,
  inFlight: number,
  small: number,
  large: number,
  childPath = fileURLToPath(new URL('./file-ops-child.ts', import.meta.url)),
): SyscallsPerOperation {
  const a = traceRun(childPath, url, small, inFlight);
  const b = traceRun(childPath, url, large, inFlight);
  const per = (key: keyof SyscallsPerOperation): number => (b[key] - a[key]) / (large - small);
  return {
    fsync: per('fsync'),
    fdatasync: per('fdatasync'),
    creates: per('creates'),
    links: per('links'),
    renames: per('renames'),
    unlinks: per('unlinks'),
    all: per('all'),
  };
}
