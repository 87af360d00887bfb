/**
 * Checkpoints of journal segments (checkpoint.ts, segment-names.ts) and the
 * anchors of relaxed writes (segments.ts): what a checkpoint syncs comes
 * from the segment file, not from a list held in memory, and the anchors
 * are a bounded window. Store-level journal behaviour: file.journal.test.ts.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkpoint } from '../../src/store/file/checkpoint.js';
import { DirSync } from '../../src/store/file/durable.js';
import { Journal } from '../../src/store/file/journal.js';
import type { RemovedRecords } from '../../src/store/file/removed.js';
import { parseSegmentName } from '../../src/store/file/segment-file.js';
import { forEachSegmentName } from '../../src/store/file/segment-names.js';
import { Segments } from '../../src/store/file/segments.js';
import { sampleRecord } from '../../src/store.js';
import { createFakeRuntime } from '../../src/testing.js';
import { removeTempDirs, tempDir } from '../helpers/file-store.js';
import { fileStore, testMachine } from '../helpers/machine.js';

/** Every path the checkpoint opens to fsync (the real open runs too). */
const opened = vi.hoisted(() => [] as string[]);
/** Set `next` to make the next synchronous write fail (in the journal-only test: the next flush's write). */
const failWrite = vi.hoisted(() => ({ next: false }));
/**
 * fsyncs that fail with EIO: of the files at `paths` (as the checkpoint
 * opened them), or every fsync while `all` is set. `failed` lists what failed.
 */
const failFsync = vi.hoisted(() => ({
  paths: new Set<string>(),
  all: false,
  failed: [] as string[],
  /** Inodes of every file and directory fsynced, in order. */
  synced: [] as number[],
  /** Closes of the files at these paths fail with EIO (NFS reports a write-back error there). */
  closePaths: new Set<string>(),
  /** Fail the rename that marks a segment for a rewrite of its records. */
  markRename: false,
  /** Path and inode of each descriptor opened through io.js (the inode tells a reused descriptor number). */
  opened: new Map<number, { path: string; ino: number }>(),
}));
/** Set `dir` to delete every journal segment in it as each flush syncs (a settler that keeps taking them). */
const deleteOnSync = vi.hoisted(() => ({ dir: undefined as string | undefined }));
vi.mock('../../src/store/file/io.js', async (importOriginal) => {
  const io = await importOriginal<typeof import('../../src/store/file/io.js')>();
  const { fstatSync } = await import('node:fs');
  return {
    ...io,
    openForReading: async (path: string) => {
      opened.push(path);
      const fd = await io.openForReading(path);
      failFsync.opened.set(fd, { path, ino: fstatSync(fd).ino });
      return fd;
    },
    fsyncFile: async (fd: number) => {
      const known = failFsync.opened.get(fd);
      const { ino } = fstatSync(fd);
      failFsync.synced.push(ino);
      const path = known !== undefined && known.ino === ino ? known.path : `fd ${fd}`;
      if (failFsync.all || failFsync.paths.has(path)) {
        failFsync.failed.push(path);
        throw Object.assign(new Error(`EIO: i/o error, fsync`), { code: 'EIO', errno: -5, syscall: 'fsync' });
      }
      return io.fsyncFile(fd);
    },
    closeFile: async (fd: number) => {
      const known = failFsync.opened.get(fd);
      const failing = known !== undefined && failFsync.closePaths.has(known.path) && known.ino === fstatSync(fd).ino;
      await io.closeFile(fd);
      if (failing) throw Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' });
    },
    renameFile: (from: string, to: string) => {
      if (failFsync.markRename && to.endsWith('.resync.log')) {
        return Promise.reject(Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' }));
      }
      return io.renameFile(from, to);
    },
    openFile: async (path: string, flags: string | number, mode?: number) => {
      const fd = await io.openFile(path, flags, mode);
      failFsync.opened.set(fd, { path, ino: fstatSync(fd).ino });
      return fd;
    },

    datasync: async (fd: number) => {
      const dir = deleteOnSync.dir;
      if (dir !== undefined) {
        const { readdirSync, rmSync } = await import('node:fs');
        for (const name of readdirSync(dir)) if (name.endsWith('.log')) rmSync(`${dir}/${name}`);
      }
      return io.datasync(fd);
    },
    writeTextSync: (fd: number, text: string, position: number | null) => {
      if (!failWrite.next) return io.writeTextSync(fd, text, position);
      failWrite.next = false;
      throw new Error('injected write failure');
    },
  };
});

afterEach(() => {
  opened.length = 0;
  failFsync.paths.clear();
  failFsync.all = false;
  failFsync.failed.length = 0;
  failFsync.synced.length = 0;
  failFsync.markRename = false;
  failFsync.closePaths.clear();
  return removeTempDirs();
});

/** A journal line's fields: the record file's name, its revision, and the record file's text. */
const entry = (n: string, r = 1, t = `{"key":"${n}"}\n{"rev":${r}}\n`) => ({ n, r, t });
/** The line as a segment file holds it. */
const line = (n: string, t?: string): string => `${JSON.stringify(entry(n, 1, t))}\n`;

async function namesOf(path: string, chunkBytes?: number): Promise<string[]> {
  const names: string[] = [];
  await forEachSegmentName(
    path,
    async (name) => {
      names.push(name);
    },
    chunkBytes,
  );
  return names;
}

/** A journal on a fresh store directory (`dir/journal`), on `runtime` (a fake one by default). */
function journalIn(runtime: ConstructorParameters<typeof Journal>[2] = createFakeRuntime()): {
  dir: string;
  journalDir: string;
  journal: Journal;
} {
  const dir = tempDir();
  const journalDir = join(dir, 'journal');
  fs.mkdirSync(journalDir);
  return {
    dir,
    journalDir,
    journal: new Journal(new DirSync(journalDir), new DirSync(dir), runtime, { machine: testMachine }),
  };
}

describe('journal segment names, read back from the file', () => {
  it('names every whole line in order, repeats included, across chunk boundaries', async () => {
    const dir = tempDir();
    const path = join(dir, 'segment.log');
    const text =
      line('a.json') +
      line('b.json', 'x'.repeat(300)) +
      `${JSON.stringify({ n: 'c.json', r: 2, d: 1 })}\n` +
      line('a.json') +
      // Not the order journal.ts writes: parsed in full.
      `${JSON.stringify({ r: 3, n: 'd.json', t: 'text' })}\n` +
      // An escape in the name: parsed in full, not cut at the backslash.
      `{"n":"e\\u002e.json","r":4,"t":"text"}\n` +
      'not json\n' +
      // A torn last line (the writer died mid-append): no newline, no name.
      '{"n":"torn.json","r":5,"t":"te';
    fs.writeFileSync(path, text);
    const expected = ['a.json', 'b.json', 'c.json', 'a.json', 'd.json', 'e..json'];
    expect(await namesOf(path)).toEqual(expected);
    // Lines longer than a chunk, and lines cut anywhere by chunk boundaries.
    for (const chunkBytes of [1, 7, 64, 301]) expect(await namesOf(path, chunkBytes)).toEqual(expected);
  });

  it('names nothing for a missing segment or one that is not a regular file', async () => {
    const dir = tempDir();
    expect(await namesOf(join(dir, 'gone.log'))).toEqual([]);
    fs.mkdirSync(join(dir, 'odd.log'));
    expect(await namesOf(join(dir, 'odd.log'))).toEqual([]);
  });
});

describe('checkpoint', () => {
  it('syncs each record its segment file names (once, however many lines), and the unwritten ones, then deletes the segment', async () => {
    const dir = tempDir();
    for (const name of ['a.json', 'b.json', 'u.json']) fs.writeFileSync(join(dir, name), `${name}\n`);
    const segment = join(dir, 'segment.log');
    // gone.json has a line but no file any more (removed since): nothing to sync, and no error.
    fs.writeFileSync(segment, line('a.json') + line('b.json') + line('a.json') + line('gone.json') + line('b.json'));
    await checkpoint(segment, new DirSync(dir), { unwritten: new Set(['u.json']) });
    expect(opened.map((path) => path.slice(dir.length + 1))).toEqual(['u.json', 'a.json', 'b.json', 'gone.json']);
    expect(fs.existsSync(segment)).toBe(false);
    for (const name of ['a.json', 'b.json', 'u.json'])
      expect(fs.readFileSync(join(dir, name), 'utf8')).toBe(`${name}\n`);
  });

  // Windows: creating a symbolic link needs a privilege test machines rarely have.
  it.skipIf(process.platform === 'win32')('a segment it cannot read stays on disk for recovery', async () => {
    const dir = tempDir();
    // A symbolic link to itself: opening it fails (ELOOP), even for root.
    const segment = join(dir, 'segment.log');
    fs.symlinkSync('segment.log', segment);
    await expect(checkpoint(segment, new DirSync(dir))).rejects.toThrow(/ELOOP/);
    expect(fs.lstatSync(segment).isSymbolicLink()).toBe(true);
  });
});

describe('a checkpoint whose fsync of a record fails', () => {
  /** A directory with record files a, b, c and a segment naming them; the checkpoint's `resync` calls. */
  function setUp(resync: (name: string) => Promise<void> = async () => undefined) {
    const dir = tempDir();
    for (const name of ['a.json', 'b.json', 'c.json']) fs.writeFileSync(join(dir, name), `${name}\n`);
    const segment = join(dir, `${'ab12'}-${process.pid}-0123456789ab.0.log`);
    fs.writeFileSync(segment, line('a.json') + line('b.json') + line('c.json') + line('b.json'));
    const resynced: string[] = [];
    const options = {
      resync: async (name: string) => {
        resynced.push(name);
        await resync(name);
      },
    };
    return { dir, segment, resynced, options, marked: segment.replace(/\.log$/, '.resync.log') };
  }

  it('has that record written again (resync) instead of trusting a later fsync, and the segment goes', async () => {
    const { dir, segment, resynced, options, marked } = setUp();
    failFsync.paths.add(join(dir, 'b.json'));
    await checkpoint(segment, new DirSync(dir), options);
    expect(failFsync.failed).toEqual([join(dir, 'b.json')]);
    // Once: the repeat of b in the segment is not fsynced again (which could succeed on pages never written).
    expect(resynced).toEqual(['b.json']);
    expect(opened.map((path) => path.slice(dir.length + 1))).toEqual(['a.json', 'b.json', 'c.json']);
    expect(fs.existsSync(segment)).toBe(false);
    expect(fs.existsSync(marked)).toBe(false);
  });

  it('counts a close that fails after the fsync as a failed fsync (NFS reports write-back errors there)', async () => {
    const { dir, segment, resynced, options } = setUp();
    failFsync.closePaths.add(join(dir, 'c.json'));
    await checkpoint(segment, new DirSync(dir), options);
    expect(failFsync.failed).toEqual([]);
    expect(resynced).toEqual(['c.json']);
    expect(fs.existsSync(segment)).toBe(false);
  });

  it('is kept, renamed for a rewrite of its records, when writing the record again fails too', async () => {
    const { dir, segment, resynced, options, marked } = setUp(async () => {
      throw new Error('injected resync failure');
    });
    failFsync.paths.add(join(dir, 'a.json'));
    const content = fs.readFileSync(segment, 'utf8');
    await expect(checkpoint(segment, new DirSync(dir), options)).rejects.toThrow(/injected resync failure/);
    expect(resynced).toEqual(['a.json']);
    expect(fs.existsSync(segment)).toBe(false);
    expect(fs.readFileSync(marked, 'utf8')).toBe(content);
    // Still a segment to recovery and to removed/'s bookkeeping, under its marked name.
    expect(parseSegmentName(marked.slice(dir.length + 1))).toMatchObject({ pid: process.pid, token: '0123456789ab' });
  });

  it('is kept, renamed, when there is nothing to write it again with, and when the directory fsync fails', async () => {
    const first = setUp();
    failFsync.paths.add(join(first.dir, 'c.json'));
    await expect(checkpoint(first.segment, new DirSync(first.dir))).rejects.toThrow(/fsync of .*c\.json failed.*EIO/);
    expect(fs.existsSync(first.marked)).toBe(true);
    // Every record synced, then the directory's fsync fails.
    const second = setUp();
    const records = new DirSync(second.dir);
    records.sync = () => Promise.reject(new Error('injected directory fsync failure'));
    await expect(checkpoint(second.segment, records, second.options)).rejects.toThrow(/directory fsync/);
    expect(second.resynced).toEqual([]);
    expect(fs.existsSync(second.segment)).toBe(false);
    expect(fs.existsSync(second.marked)).toBe(true);
  });

  it('stays under its name, and says so, when even the rename that marks it fails', async () => {
    const { dir, segment, options, marked } = setUp(async () => {
      throw new Error('injected resync failure');
    });
    failFsync.paths.add(join(dir, 'b.json'));
    failFsync.markRename = true;
    await expect(checkpoint(segment, new DirSync(dir), options)).rejects.toThrow(
      /injected resync failure; the segment could not be marked/,
    );
    expect(fs.existsSync(segment)).toBe(true);
    expect(fs.existsSync(marked)).toBe(false);
  });

  it('refuses to settle a marked segment without a way to write its records again', async () => {
    const { dir, marked, segment } = setUp();
    fs.renameSync(segment, marked);
    await expect(checkpoint(marked, new DirSync(dir), { resyncAll: true })).rejects.toThrow(/resyncAll needs resync/);
    expect(opened).toEqual([]);
    expect(fs.existsSync(marked)).toBe(true);
  });

  it('marked, has every record it names written again, none fsynced in place, then goes', async () => {
    const { dir, resynced, options, segment, marked } = setUp();
    fs.renameSync(segment, marked);
    await checkpoint(marked, new DirSync(dir), { ...options, resyncAll: true });
    expect(resynced).toEqual(['a.json', 'b.json', 'c.json']);
    expect(opened).toEqual([]);
    expect(fs.existsSync(marked)).toBe(false);
  });
});

describe('anchors of relaxed writes', () => {
  function segmentsIn(
    dir: string,
    anchorLimit: number,
    options: {
      runtime?: ReturnType<typeof createFakeRuntime>;
      barrier?: () => Promise<void>;
      flushing?: () => boolean;
      onCheckpoint?: () => void;
    } = {},
  ): Segments {
    const journal = join(dir, 'journal');
    fs.mkdirSync(journal);
    return new Segments({
      dir: new DirSync(journal),
      records: new DirSync(dir),
      runtime: options.runtime ?? createFakeRuntime(),
      token: '0123456789ab',
      machine: testMachine,
      barrier: options.barrier ?? (async () => undefined),
      flushing: options.flushing ?? (() => false),
      onCheckpoint: options.onCheckpoint ?? (() => undefined),
      anchorLimit,
    });
  }

  it('an idle segment whose retirement meets a running flush is retired once the flush is over', async () => {
    const dir = tempDir();
    const runtime = createFakeRuntime();
    let flushing = false;
    let checkpoints = 0;
    const segments = segmentsIn(dir, 4, {
      runtime,
      flushing: () => flushing,
      onCheckpoint: () => {
        checkpoints++;
      },
    });
    await segments.current();
    flushing = true;
    await runtime.advance(30_000);
    flushing = false;
    // Not retired under the flush (that would checkpoint it at 65 s), but 1 s later, and checkpointed 35 s after.
    await runtime.advance(35_000);
    expect(checkpoints).toBe(0);
    expect(fs.readdirSync(join(dir, 'journal'))).toHaveLength(1);
    await runtime.advance(1_000);
    await vi.waitUntil(() => checkpoints === 1, { timeout: 5_000 });
    expect(fs.readdirSync(join(dir, 'journal'))).toEqual([]);
    await segments.close();
  });

  it('remember the last records flushed, up to the limit, oldest forgotten first, each at its revision', async () => {
    const segments = segmentsIn(tempDir(), 2);
    const segment = await segments.current();
    // As the journal does it: a line is queued (written), then flushed.
    const write = (name: string, rev: number): void => {
      segments.written(name, rev);
      segments.flushed(name, rev, segment);
    };
    write('a.json', 1);
    write('b.json', 1);
    write('a.json', 2);
    write('c.json', 1);
    // a.json was flushed again after b.json: b.json is the oldest, and the one forgotten.
    expect(['a.json', 'b.json', 'c.json'].map((name) => segments.anchors(name, name === 'a.json' ? 2 : 1))).toEqual([
      true,
      false,
      true,
    ]);
    // Only the revision this handle wrote last: a version written by anyone else since is not covered.
    expect(segments.anchors('a.json', 1)).toBe(false);
    expect(segments.anchors('c.json', 2)).toBe(false);
    // A line queued (a relaxed write of its own) moves the revision on; the flushed line before it anchors it.
    segments.written('c.json', 2);
    expect(segments.anchors('c.json', 2)).toBe(true);
    expect(segments.anchors('c.json', 1)).toBe(false);
    // Written but never flushed: nothing anchors it.
    segments.written('d.json', 1);
    expect(segments.anchors('d.json', 1)).toBe(false);
    await segments.close();
  });

  it('end when their segment breaks or its checkpoint starts', async () => {
    const segments = segmentsIn(tempDir(), 10);
    const first = await segments.current();
    segments.flushed('a.json', 1, first);
    segments.flushed('b.json', 1, first);
    first.broken = true;
    expect(segments.anchors('a.json', 1)).toBe(false);
    const second = await segments.current();
    expect(second).not.toBe(first);
    segments.flushed('b.json', 1, second);
    expect(segments.anchors('b.json', 1)).toBe(true);
    // close() retires and checkpoints every segment.
    await segments.close();
    expect(second.checkpointing).toBe(true);
    expect(segments.anchors('b.json', 1)).toBe(false);
  });

  it('end when the checkpoint starts, before it waits for the queued lines to flush', async () => {
    // A relaxed write accepted while the barrier is pending would be anchored by a segment about to go.
    const runtime = createFakeRuntime();
    let barrierCalled = false;
    const segments = segmentsIn(tempDir(), 10, {
      runtime,
      barrier: () => {
        barrierCalled = true;
        return new Promise<void>(() => undefined);
      },
    });
    const segment = await segments.current();
    segments.flushed('a.json', 1, segment);
    // Retired when idle at 30 s, checkpointed 35 s later.
    await runtime.advance(30_000);
    expect(segments.anchors('a.json', 1)).toBe(true);
    await runtime.advance(35_000);
    expect(barrierCalled).toBe(true);
    expect(segments.anchors('a.json', 1)).toBe(false);
  });
});

describe('a journal flush that fails', () => {
  it('anchors none of the lines of its segment, and the checkpoint still syncs the records whose lines it lost', async () => {
    const { dir, journalDir, journal } = journalIn();
    await journal.append(entry('a.json', 1));
    expect(journal.appendRelaxed(entry('a.json', 2), 1)).toBe(true);
    // Flushed with the next durable line (a relaxed line in a failed flush would be reported as lost).
    await journal.append(entry('c.json', 1));
    failWrite.next = true;
    await expect(journal.append(entry('b.json', 1))).rejects.toThrow('injected write failure');
    // The segment is broken: its lines anchor nothing any more (a.json's), and b.json's never reached it.
    expect(journal.appendRelaxed(entry('a.json', 3), 2)).toBe(false);
    expect(journal.appendRelaxed(entry('b.json', 2), 1)).toBe(false);
    // A durable line in a new segment anchors again.
    await journal.append(entry('a.json', 3));
    expect(journal.appendRelaxed(entry('a.json', 4), 3)).toBe(true);
    opened.length = 0;
    await journal.close();
    // Both segments checkpointed; b.json is synced though no segment file names it.
    expect(new Set(opened.map((path) => path.slice(dir.length + 1)))).toEqual(new Set(['a.json', 'b.json', 'c.json']));
    expect(fs.readdirSync(journalDir)).toEqual([]);
  });
});

describe('a relaxed line that waited too long for its flush', () => {
  it('is not written (a segment started after a deletion could bring an old version back); its record is synced by the checkpoint', async () => {
    // A process frozen with relaxed lines queued: no timer runs, and its clock moves on.
    let nowMs = 0;
    const { dir, journalDir, journal } = journalIn({ monotonicNow: () => nowMs, schedule: () => () => undefined });
    for (const name of ['k.json', 'only.json', 'fresh.json', 'b.json']) fs.writeFileSync(join(dir, name), `${name}\n`);
    await journal.append(entry('k.json', 1));
    await journal.append(entry('fresh.json', 1));
    expect(journal.appendRelaxed(entry('k.json', 2), 1)).toBe(true);
    // A relaxed create: no other line names it, so only the checkpoint's own list of lost lines can sync it.
    expect(journal.appendRelaxed(entry('only.json', 1), undefined)).toBe(true);
    nowMs += 30_001;
    expect(journal.appendRelaxed(entry('fresh.json', 2), 1)).toBe(true);
    await journal.append(entry('b.json', 1));
    // Two segments by now (the first one got too old): read in the order they were written.
    const text = fs
      .readdirSync(journalDir)
      .sort((a, b) => Number(a.split('.').at(-2)) - Number(b.split('.').at(-2)))
      .map((name) => fs.readFileSync(join(journalDir, name), 'utf8'))
      .join('');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { n: string; r: number }) => `${l.n}@${l.r}`)).toEqual([
      'k.json@1',
      'fresh.json@1',
      'fresh.json@2',
      'b.json@1',
    ]);
    opened.length = 0;
    await journal.close();
    expect(new Set(opened.map((path) => path.slice(dir.length + 1)))).toEqual(
      new Set(['k.json', 'only.json', 'fresh.json', 'b.json']),
    );
  });
});

describe('a journal segment deleted under its writer', () => {
  it('gets no more lines: the batch is written again, in a new segment, before its writers are told', async () => {
    const { journalDir, journal } = journalIn();
    await journal.append(entry('a.json', 1));
    // Another process took this writer for a dead one and settled its segment.
    for (const name of fs.readdirSync(journalDir)) fs.rmSync(join(journalDir, name));
    await journal.append(entry('b.json', 1));
    const segments = fs.readdirSync(journalDir);
    expect(segments).toHaveLength(1);
    expect(fs.readFileSync(join(journalDir, segments[0] ?? ''), 'utf8')).toContain('"n":"b.json"');
    await journal.close();
  });
});

describe('journal segments deleted as they are written, again and again', () => {
  it('make the write fail after a few new segments, rather than resolve on lines nothing keeps', async () => {
    const { journalDir, journal } = journalIn();
    deleteOnSync.dir = journalDir;
    try {
      await expect(journal.append(entry('a.json', 1))).rejects.toThrow(/was deleted as it was written/);
    } finally {
      deleteOnSync.dir = undefined;
    }
    // The next write goes to a segment that stays.
    await journal.append(entry('b.json', 1));
    expect(fs.readdirSync(journalDir)).toHaveLength(1);
    await journal.close();
  });
});

describe('a checkpoint with removed records', () => {
  it('makes the moves into removed/ durable before it deletes its segment, and prunes after', async () => {
    const dir = tempDir();
    const segment = join(dir, 'segment.log');
    fs.writeFileSync(segment, line('a.json'));
    const steps: string[] = [];
    const removed = {
      sync: async () => {
        steps.push(`sync (segment ${fs.existsSync(segment) ? 'still there' : 'gone'})`);
      },
      prune: async () => {
        steps.push(`prune (segment ${fs.existsSync(segment) ? 'still there' : 'gone'})`);
      },
    } as unknown as RemovedRecords;
    await checkpoint(segment, new DirSync(dir), { removed });
    expect(steps).toEqual(['sync (segment still there)', 'prune (segment gone)']);
  });
});

describe('a store whose checkpoint meets a failed fsync', () => {
  const recordFileOf = (dir: string): string => {
    const [name] = fs.readdirSync(dir).filter((entry) => entry.endsWith('.json'));
    if (name === undefined) throw new Error('no record file');
    return join(dir, name);
  };
  const segmentsOf = (dir: string): string[] => fs.readdirSync(join(dir, 'journal')).filter((n) => n.endsWith('.log'));
  /** A store on a new directory holding one record, `k1`, and that record's file. */
  async function storeWithOneRecord() {
    const dir = tempDir();
    const store = fileStore({ dir });
    await store.put(sampleRecord('k1'));
    return { dir, store, path: recordFileOf(dir) };
  }

  it('writes the record again into a new file (same text, new inode) and deletes the segment', async () => {
    const { dir, store, path } = await storeWithOneRecord();
    const before = { ino: fs.statSync(path).ino, text: fs.readFileSync(path, 'utf8') };
    failFsync.paths.add(path);
    const warnings = vi.spyOn(process, 'emitWarning');
    try {
      await store.close(); // checkpoints the segment
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
    }
    expect(failFsync.failed).toEqual([path]);
    expect(fs.statSync(path).ino).not.toBe(before.ino);
    expect(fs.readFileSync(path, 'utf8')).toBe(before.text);
    expect(segmentsOf(dir)).toEqual([]);
    const again = fileStore({ dir });
    expect((await again.get('k1'))?.key).toBe('k1');
    await again.close();
  });

  it('keeps the segment, marked, when the new file fails too; the next handle writes the record again from it', async () => {
    const { dir, store, path } = await storeWithOneRecord();
    const { ino } = fs.statSync(path);
    failFsync.paths.add(path);
    failFsync.paths.add(`${path}.pending`); // the new file's claim
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await store.close();
      expect(warnings.mock.calls.map(([message]) => String(message))).toEqual([
        expect.stringMatching(/journal checkpoint of .*\.0\.log failed: .*EIO.*kept as .*\.0\.resync\.log/),
      ]);
    } finally {
      warnings.mockRestore();
    }
    const [marked] = segmentsOf(dir);
    expect(marked).toMatch(/\.0\.resync\.log$/);
    expect(fs.statSync(path).ino).toBe(ino);
    // The disk works again. This writer is gone: the next handle settles its journal.
    failFsync.paths.clear();
    failFsync.failed.length = 0;
    opened.length = 0;
    failFsync.synced.length = 0;
    const next = fileStore({ dir });
    expect((await next.get('k1'))?.key).toBe('k1');
    expect(segmentsOf(dir)).toEqual([]);
    // Written again, not fsynced in place: a new inode, and the old file was never opened to be synced.
    expect(fs.statSync(path).ino).not.toBe(ino);
    expect(opened).not.toContain(path);
    // The new file fsynced, and the directory once, by the checkpoint (not once per record written again).
    const dirIno = fs.statSync(dir).ino;
    expect(failFsync.synced.filter((synced) => synced === dirIno)).toHaveLength(1);
    expect(failFsync.synced).toContain(fs.statSync(path).ino);
    await next.close();
  });

  it('keeps the segment when the file is no valid record any more, and recovery restores it from the line', async () => {
    const { dir, store, path } = await storeWithOneRecord();
    const text = fs.readFileSync(path, 'utf8');
    // What a lost write-back can leave once the pages are gone from memory: zeros where the record was.
    fs.writeFileSync(path, Buffer.alloc(Buffer.byteLength(text)));
    failFsync.paths.add(path);
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await store.close();
      expect(warnings.mock.calls.map(([message]) => String(message))).toEqual([
        expect.stringMatching(/not a valid record: not written again.*kept as .*\.resync\.log/),
      ]);
    } finally {
      warnings.mockRestore();
    }
    expect(segmentsOf(dir)).toEqual([expect.stringMatching(/\.resync\.log$/)]);
    failFsync.paths.clear();
    const next = fileStore({ dir });
    expect((await next.get('k1'))?.key).toBe('k1');
    expect(fs.readFileSync(path, 'utf8')).toBe(text);
    expect(await next.quarantined()).toEqual([]);
    expect(segmentsOf(dir)).toEqual([]);
    await next.close();
  });
});
