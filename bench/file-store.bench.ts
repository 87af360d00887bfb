/**
 * File store benchmark (run with `npx tsx bench/file-store.bench.ts`; not a test).
 *
 *   npx tsx bench/file-store.bench.ts [--writes 2000] [--concurrency 32] [--rounds 7] [--ops 400] [--list 10000] [--syscalls 1000] [--sustained 0] [--dir PATH]
 *   npx tsx bench/file-store.bench.ts --writes 0 --ops 0 --list 0 --syscalls 0 --sustained 90   # the sustained run alone
 *
 * Durable writes per second of:
 * - naive: the textbook protocol with nothing shared — per write: temp file,
 *   fsync, rename, open + fsync + close of the directory; no lock;
 * - fileStore.put: the same protocol, plus the cross-process claim file, the
 *   in-process key queue, record validation, and the directory fsync
 *   group-committed across concurrent writers;
 * - fileStore.update: a full read-modify-write (what the engine does on every step);
 * sequentially and with N concurrent writers (distinct keys), as ratios to
 * naive. Then whole operations through the client (memory vs file store),
 * `list()` over many records (the resume path; `--list 100000`), where the
 * time of one sequential operation goes (each store write step by step, and
 * the file-system calls behind the steps alone), and the
 * system calls of one whole operation, counted with `strace -f` where it is
 * installed (bench/lib/syscalls.ts: disk flushes and directory changes per
 * operation, sequentially and at 32 in flight; `--syscalls 0` skips it).
 *
 * `--sustained SECONDS` (opt-in: it takes four times that) adds the long run:
 * each store at 32 in flight for that long through the client, as a ratio to
 * the memory store in the same run, its close included in the window. The
 * short interleaved windows of the overhead bench (300–400 ms) leave the
 * write-behind, the checkpoints' fsyncs (a segment is checkpointed 65 s after
 * it opened) and the close outside the measurement, or bill them to the next
 * contender; a run of 90 s or more spans them.
 *
 * Every figure depends on the disk: run it on the disk your users have, on an
 * otherwise idle machine (a shared disk makes single runs swing by 2x; the
 * ratios come from alternating rounds for that reason). For the heap figure
 * of list(): `node --expose-gc --import tsx bench/file-store.bench.ts`.
 * The store directory defaults to a temp dir under os.tmpdir().
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, fileStore, memoryStore, type OperationStore } from '../src/node.js';
import { type WriteStep, writeSteps } from '../src/store/file/durable.js';
import { closeFile, fsyncFile, openFile, renameFile, writeAt } from '../src/store/file/io.js';
import { type FileStore, type FileStoreStats, fileStoreStats } from '../src/store/file/store.js';
import { sampleRecord } from '../src/store.js';
import { startReferenceServer } from '../src/testing.js';
import { startChildServer } from './lib/json-server.js';
import { straceAvailable, syscallsPerOperation } from './lib/syscalls.js';

const { values } = parseArgs({
  options: {
    writes: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    list: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '7' },
    ops: { type: 'string', default: '400' },
    syscalls: { type: 'string', default: '1000' },
    sustained: { type: 'string', default: '0' },
    dir: { type: 'string' },
  },
});
const SYSCALL_OPS = Number(values.syscalls);
const SUSTAINED_S = Number(values.sustained);
const ROUNDS = Number(values.rounds);
const OPS = Number(values.ops);
const WRITES = Number(values.writes);
const CONCURRENCY = Number(values.concurrency);
const LIST = Number(values.list);
const root = fs.mkdtempSync(join(values.dir ?? tmpdir(), 'oncely-bench-'));

/** A realistic record: a payment with two finished attempts and a stored result (~1.2 KB). */
function record(key: string, epoch = 0) {
  return sampleRecord(key, {
    epoch,
    state: 'succeeded',
    createdAt: Date.now(),
    deadlineAt: Date.now() + 60_000,
    nextAttemptAt: Date.now(),
    attempts: [
      { n: 1, owner: 'bench', startedAt: 1, endedAt: 2, class: 'ambiguous', sent: 'maybe', error: 'timeout' },
      { n: 2, owner: 'bench', startedAt: 3, endedAt: 4, class: 'completed', sent: 'definitely', status: 201 },
    ],
    result: {
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: {
        encoding: 'json',
        text: JSON.stringify({ id: 'res_1', amount: 4800, currency: 'EUR', note: 'x'.repeat(300) }),
      },
      replayed: true,
      receivedAt: 4,
    },
  });
}

/**
 * The naive durable write: everything per write, nothing shared, no lock.
 * Same I/O primitives as the store (callback fs on the thread pool), so the
 * ratio measures the design, not the API flavour.
 */
function naiveWriter(dir: string) {
  let seq = 0;
  return async (key: string, text: string): Promise<void> => {
    const temp = join(dir, `.tmp-${process.pid}-${seq++}`);
    const fd = await openFile(temp, 'wx', 0o600);
    try {
      await writeAt(fd, Buffer.from(text, 'utf8'), 0);
      await fsyncFile(fd);
    } finally {
      await closeFile(fd);
    }
    await renameFile(temp, join(dir, `${key}.json`));
    const dirFd = await openFile(dir, 'r');
    try {
      await fsyncFile(dirFd);
    } finally {
      await closeFile(dirFd);
    }
  };
}

/** Runs `total` writes with `workers` concurrent writers; returns writes per second. */
async function measure(total: number, workers: number, write: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = next++; i < total; i = next++) await write(i);
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

interface Row {
  case: string;
  writesPerSec: number;
  ratio: number;
  flushesPerWrite?: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * One concurrency level. The three contenders run in alternation, ROUNDS
 * times, and each figure is the median of its rounds: a shared or noisy disk
 * drifts a lot over seconds, and alternating keeps the ratios fair.
 */
async function suite(label: string, workers: number): Promise<Row[]> {
  const perRound = Math.max(workers * 4, Math.round((workers === 1 ? Math.min(WRITES, 600) : WRITES) / ROUNDS));
  const keys = Math.max(workers * 4, 64); // distinct keys at any moment: no two writers on one record
  const text = JSON.stringify(record('warm'));
  const naive = naiveWriter(fs.mkdtempSync(join(root, 'naive-')));
  const putStore = fileStore({ dir: fs.mkdtempSync(join(root, 'put-')) });
  const updStore = fileStore({ dir: fs.mkdtempSync(join(root, 'update-')) });
  for (let k = 0; k < keys; k++) await updStore.put(record(`k${k}`));
  const bump = (current: ReturnType<typeof record> | undefined) =>
    current === undefined ? undefined : { ...current, epoch: current.epoch + 1 };

  const rates = { naive: [] as number[], put: [] as number[], update: [] as number[] };
  let offset = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const base = offset;
    offset += perRound;
    rates.naive.push(await measure(perRound, workers, (i) => naive(`k${(base + i) % keys}`, text)));
    rates.put.push(await measure(perRound, workers, (i) => putStore.put(record(`k${(base + i) % keys}`, i))));
    rates.update.push(
      await measure(perRound, workers, (i) => updStore.update(`k${(base + i) % keys}`, bump).then(() => undefined)),
    );
  }
  const stats = fileStoreStats(putStore);
  await putStore.close();
  await updStore.close();
  const naiveRate = median(rates.naive);
  const ratio = (r: number[]) => median(r.map((x, i) => x / (rates.naive[i] ?? x)));
  return [
    { case: `${label} naive fsync-per-write`, writesPerSec: naiveRate, ratio: 1 },
    {
      case: `${label} fileStore.put`,
      writesPerSec: median(rates.put),
      ratio: ratio(rates.put),
      flushesPerWrite: stats.journalFlushes / stats.commits,
    },
    { case: `${label} fileStore.update`, writesPerSec: median(rates.update), ratio: ratio(rates.update) },
  ];
}

async function listBench(): Promise<Record<string, number | string>> {
  const dir = fs.mkdtempSync(join(root, 'list-'));
  // Written directly (not durably): this measures reading, not writing.
  const now = Date.now();
  for (let i = 0; i < LIST; i++) {
    const key = `${i.toString(16).padStart(8, '0')}-7d41-4c7a-9a3e-0b6c1f6f3b2d`;
    const r = sampleRecord(key, {
      state: i % 10 === 0 ? 'succeeded' : 'pending',
      createdAt: now,
      nextAttemptAt: now + (i % 97),
    });
    fs.writeFileSync(join(dir, `${key}.json`), JSON.stringify(r), { mode: 0o600 });
  }
  const store = fileStore({ dir });
  // Run with `node --expose-gc --import tsx` for a meaningful heap figure.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let started = performance.now();
  const all = await store.list({ state: ['pending', 'in_flight'] });
  const listMs = performance.now() - started;
  gc?.();
  const heapAfter = process.memoryUsage().heapUsed;
  started = performance.now();
  const limited = await store.list({ state: 'pending', limit: 100 });
  const limitedMs = performance.now() - started;
  await store.close();
  return {
    records: LIST,
    returned: all.length,
    listMs: Math.round(listMs),
    recordsPerSec: Math.round((LIST / listMs) * 1000),
    heapGrowthMB:
      gc === undefined ? 'run with --expose-gc' : Math.round(((heapAfter - heapBefore) / 2 ** 20) * 10) / 10,
    bytesPerReturnedRecord: gc === undefined ? '' : Math.round((heapAfter - heapBefore) / Math.max(1, all.length)),
    limit100Ms: Math.round(limitedMs),
    limit100Returned: limited.length,
  };
}

/**
 * Whole operations against a local server: 3 writes each (write-ahead,
 * attempt started, result; the claim of a record its creator already leased
 * writes nothing), of which one is durable before it resolves (the attempt's
 * start; the other two are relaxed: README, "Durability, step by step").
 */
async function operationsBench(): Promise<Record<string, number | string>[]> {
  const server = await startReferenceServer();
  const rows: Record<string, number | string>[] = [];
  try {
    for (const concurrency of [1, 32]) {
      const rate: Record<string, number> = {};
      for (const [name, make] of [
        ['memoryStore', () => memoryStore()],
        ['fileStore', () => fileStore({ dir: fs.mkdtempSync(join(root, 'ops-')) })],
      ] as [string, () => OperationStore][]) {
        const client = createClient({ store: make(), baseUrl: server.url });
        const total = concurrency === 1 ? Math.min(OPS, 150) : OPS;
        rate[name] = await measure(total, concurrency, async (i) => {
          await client.send({ method: 'POST', url: '/payments', json: { op: `${name}-${concurrency}-${i}` } });
        });
        await client.close();
      }
      rows.push({
        concurrency,
        'memoryStore ops/s': Math.round(rate.memoryStore ?? 0),
        'fileStore ops/s': Math.round(rate.fileStore ?? 0),
        'writes/s': Math.round((rate.fileStore ?? 0) * 3),
      });
    }
  } finally {
    await server.close();
  }
  return rows;
}

/**
 * The sustained run (`--sustained SECONDS`): whole operations at 32 in flight
 * against the JSON server in its own process, each store for `seconds`, then
 * its client and store closed inside the window (what the write-behind and
 * the checkpoints left to do is billed to the store that left it). The
 * memory store runs first and last, and the ratio of each file store is to
 * the mean of those two runs, so a drift of the shared machine over the
 * minutes is split between them.
 */
async function sustainedBench(seconds: number): Promise<Record<string, number | string>[]> {
  const server = await startChildServer();
  const inFlight = 32;
  const runs: Array<{ name: string; opsPerSec: number; operations: number; seconds: number; stats?: FileStoreStats }> =
    [];
  try {
    const contenders: Array<[string, () => OperationStore]> = [
      ['memoryStore', () => memoryStore()],
      ['fileStore', () => fileStore({ dir: fs.mkdtempSync(join(root, 'sustained-')) })],
      ['fileStore (exclusive)', () => fileStore({ dir: fs.mkdtempSync(join(root, 'sustained-x-')), exclusive: true })],
      ['memoryStore', () => memoryStore()],
    ];
    for (const [name, make] of contenders) {
      const store = make();
      const client = createClient({ store, baseUrl: server.url });
      const send = (i: number) => client.send({ method: 'POST', url: '/payments', json: { op: `${name}-${i}` } });
      // Warm the JIT and the connections (not timed).
      for (let i = 0; i < 200; i++) await send(-i - 1);
      let operations = 0;
      const started = performance.now();
      const until = started + seconds * 1000;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (performance.now() < until) await send(operations++);
        }),
      );
      await client.close();
      await store.close?.();
      // Read after the close, so that the checkpoints it made are counted too.
      const stats = name.startsWith('fileStore') ? fileStoreStats(store as FileStore) : undefined;
      const elapsedS = (performance.now() - started) / 1000;
      runs.push({ name, opsPerSec: operations / elapsedS, operations, seconds: elapsedS, ...(stats ? { stats } : {}) });
    }
  } finally {
    await server.close();
  }
  const memory = runs.filter((r) => r.name === 'memoryStore').map((r) => r.opsPerSec);
  const memoryMean = memory.reduce((a, b) => a + b, 0) / Math.max(1, memory.length);
  return runs.map((r) => ({
    store: r.name,
    'seconds (close included)': r.seconds.toFixed(1),
    operations: r.operations,
    'ops/s': Math.round(r.opsPerSec),
    '× memory store (mean of its two runs)': (r.opsPerSec / memoryMean).toFixed(2),
    checkpoints: r.stats?.checkpoints ?? '',
    'journal flushes/commit': r.stats === undefined ? '' : (r.stats.journalFlushes / r.stats.commits).toFixed(2),
    'files written behind': r.stats?.writtenBehind ?? '',
  }));
}

/** The column of each step of a store write (claim.ts `writeSteps`), in the order they come. */
const STEP_LABELS: Record<WriteStep, string> = {
  'claim-opened': 'claim taken (queue, read-ahead, create)',
  'claim-written': 'holder line written',
  'temp-written': 'version written into the claim',
  durable: 'made durable (journal flush) or queued',
  renamed: 'renamed over the record',
  'written-behind': 'written behind the journal (exclusive store)',
};

/**
 * Where the time of one sequential operation goes (`send` → 201, the JSON
 * server in its own process): the two store writes of an operation that
 * succeeds at once (the write-ahead that starts attempt 1, durable; the
 * result, relaxed), step by step (claim.ts's `writeSteps`), and the rest of
 * the operation. Then what the file-system calls behind those steps cost
 * alone, synchronously, in a directory of the same file system: they explain
 * the steps (a rename over a record whose new file still has delayed blocks
 * makes ext4 allocate and start writing them, `auto_da_alloc`).
 */
async function stepsBench(): Promise<{ steps: Record<string, number | string>[]; calls: Record<string, number>[] }> {
  const server = await startChildServer();
  const store = fileStore({ dir: fs.mkdtempSync(join(root, 'steps-')) });
  const sums: [Record<string, number>, Record<string, number>] = [{}, {}];
  let measuring = false;
  let writeIndex = 0;
  let stepStart = 0;
  let otherMs = 0;
  let lastEnd = 0;
  const add = (index: number, label: string, ms: number): void => {
    if (!measuring) return;
    const sum = sums[index % 2] as Record<string, number>;
    sum[label] = (sum[label] ?? 0) + ms;
  };
  const timed: OperationStore = Object.create(store);
  timed.update = async (key, fn, options) => {
    const index = writeIndex++;
    stepStart = performance.now();
    if (measuring) otherMs += stepStart - lastEnd;
    const started = stepStart;
    writeSteps.hook = (step) => {
      const now = performance.now();
      add(index, STEP_LABELS[step], now - stepStart);
      stepStart = now;
    };
    try {
      return await store.update(key, fn, options);
    } finally {
      writeSteps.hook = undefined;
      lastEnd = performance.now();
      add(index, 'claim released, resolved', lastEnd - stepStart);
      add(index, 'total', lastEnd - started);
    }
  };
  const client = createClient({ store: timed, baseUrl: server.url });
  const operations = Math.max(100, Math.min(OPS, 400));
  let wallMs = 0;
  try {
    const send = (i: number) => client.send({ method: 'POST', url: '/payments', json: { op: `steps-${i}` } });
    for (let i = 0; i < 100; i++) await send(i);
    writeIndex = 0;
    measuring = true;
    lastEnd = performance.now();
    const started = lastEnd;
    for (let i = 0; i < operations; i++) await send(i);
    wallMs = performance.now() - started;
    otherMs += performance.now() - lastEnd;
    // The table pairs writes by parity: it holds only if every operation made exactly its two writes.
    if (writeIndex !== 2 * operations) throw new Error(`expected ${2 * operations} store writes, saw ${writeIndex}`);
  } finally {
    measuring = false;
    await client.close();
    await store.close();
    await server.close();
  }
  const us = (ms: number | undefined) => Math.round(((ms ?? 0) / operations) * 1000);
  const labels = [...Object.values(STEP_LABELS), 'claim released, resolved'] as const;
  const steps: Record<string, number | string>[] = (
    ['write-ahead + attempt 1 started (durable)', 'succeeded (relaxed)'] as const
  ).map((write, i) => {
    const sum = sums[i] as Record<string, number>;
    return { write, ...Object.fromEntries(labels.map((label) => [label, us(sum[label])])), total: us(sum.total) };
  });
  steps.push({ write: 'the rest of the operation (engine, HTTP)', total: us(otherMs) });
  steps.push({ write: 'whole operation', total: us(wallMs) });
  return { steps, calls: [await fileSystemCalls(fs.mkdtempSync(join(root, 'calls-')))] };
}

/**
 * µs per call in `dir`, synchronously (the store makes the directory changes
 * on the thread pool, which adds a round trip: the last column), each the
 * way a store write makes it: a new claim file with a version in it; that
 * file renamed over the record; a journal line appended and flushed.
 */
async function fileSystemCalls(dir: string): Promise<Record<string, number>> {
  const n = 300;
  const text = 'x'.repeat(2_200);
  const line = `${'y'.repeat(5_000)}\n`;
  const time = (work: (i: number) => void): number => {
    const started = performance.now();
    for (let i = 0; i < n; i++) work(i);
    return Math.round(((performance.now() - started) / n) * 1000);
  };
  for (let i = 0; i < n; i++) fs.writeFileSync(join(dir, `record-${i}`), text);
  const create = time((i) => {
    const fd = fs.openSync(join(dir, `claim-${i}`), 'wx', 0o600);
    fs.writeSync(fd, text, 0);
    fs.closeSync(fd);
  });
  const renameOver = time((i) => fs.renameSync(join(dir, `claim-${i}`), join(dir, `record-${i}`)));
  const journal = fs.openSync(join(dir, 'journal'), 'a', 0o600);
  const flush = time(() => {
    fs.writeSync(journal, line);
    fs.fdatasyncSync(journal);
  });
  fs.closeSync(journal);
  const started = performance.now();
  for (let i = 0; i < n; i++) await new Promise((resolve) => fs.stat(dir, resolve));
  const hop = Math.round(((performance.now() - started) / n) * 1000);
  return {
    'create a file, write 2 KB into it': create,
    'rename it over a record': renameOver,
    'append 5 KB + fdatasync': flush,
    'thread-pool round trip (fs.stat)': hop,
  };
}

/**
 * System calls per whole operation (`send` → 201, the JSON server in its own
 * process), from two traced runs (bench/lib/syscalls.ts). Figures from
 * before the relaxed writes, pinned reads and the one-create claim, same
 * machine (strace, 1,000 operations): sequential 1 fsync + 3 fdatasync, 12
 * directory changes (3 creates, 3 links, 3 renames, 3 unlinks), 97 traced
 * calls; 32 in flight 1 fsync + 0.25 fdatasync, 12 directory changes, 63
 * traced calls. (The fsync is the checkpoint's, one per record, at close.)
 */
async function syscallsBench(): Promise<void> {
  if (!straceAvailable()) {
    console.log('system calls per operation: skipped (strace is not installed)');
    return;
  }
  const server = await startChildServer();
  try {
    const rows = [1, 32].map((inFlight) => {
      const large = inFlight === 1 ? Math.max(50, Math.round(SYSCALL_OPS / 5)) : SYSCALL_OPS;
      const small = Math.max(10, Math.round(large / 10));
      const per = syscallsPerOperation(server.url, inFlight, small, large);
      const fixed = (n: number) => n.toFixed(2);
      return {
        'in flight': inFlight,
        operations: `${large} − ${small}`,
        fsync: fixed(per.fsync),
        fdatasync: fixed(per.fdatasync),
        'creates (O_CREAT)': fixed(per.creates),
        links: fixed(per.links),
        renames: fixed(per.renames),
        unlinks: fixed(per.unlinks),
        'directory changes': fixed(per.creates + per.links + per.renames + per.unlinks),
        'all traced calls': fixed(per.all),
      };
    });
    console.log('system calls per whole operation (strace -f; the fsync is the checkpoint, one per record):');
    console.table(rows);
  } finally {
    await server.close();
  }
}

try {
  const rows =
    WRITES > 0 ? [...(await suite('sequential', 1)), ...(await suite(`${CONCURRENCY} concurrent`, CONCURRENCY))] : [];
  console.log(`file store benchmark (${process.platform}, node ${process.version}, ${WRITES} writes per case)`);
  if (rows.length > 0)
    console.table(
      rows.map((r) => ({
        case: r.case,
        'writes/s': Math.round(r.writesPerSec),
        'ratio vs naive (median of rounds)': r.ratio.toFixed(2),
        'journal flushes/write': r.flushesPerWrite === undefined ? '' : r.flushesPerWrite.toFixed(2),
      })),
    );
  if (OPS > 0) {
    console.log('whole operations through the client (send → 201), local reference server:');
    console.table(await operationsBench());
  }
  if (LIST > 0) {
    console.log(`list() over ${LIST} records:`);
    console.table([await listBench()]);
  }
  if (OPS > 0) {
    const { steps, calls } = await stepsBench();
    console.log('one sequential operation, step by step (µs per operation, mean):');
    console.table(steps);
    console.log('the file-system calls behind the steps, alone (µs per call, synchronous, same file system):');
    console.table(calls);
  }
  if (SYSCALL_OPS > 0) await syscallsBench();
  if (SUSTAINED_S > 0) {
    console.log(
      `sustained run: ${SUSTAINED_S} s per store at 32 in flight, close included (memory store first and last):`,
    );
    console.table(await sustainedBench(SUSTAINED_S));
  }
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
