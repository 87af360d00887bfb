/**
 * Child process for the crash, race and cross-process tests. It is a real
 * oncely user: a client on a file store, talking to the reference server of
 * the parent test process (whose ledger outlives every child).
 *
 * Configured by one JSON argument (`WorkerConfig`). Prints one line per
 * event on stdout (`ready`, `enq <key> <op>`, `done <json>`) so the parent
 * learns which operations were acknowledged as written ahead.
 *
 * Modes:
 * - `run`: enqueue `enqueue` new operations, then resume everything stored
 *   (taking over what a killed predecessor left once its lease expires)
 *   until nothing is pending or in flight. A `kill` plan makes the process
 *   SIGKILL itself at an exact point; the parent may also kill it any time.
 * - `increment`: `count` read-modify-writes of one record through
 *   `store.update` (cross-process atomicity of the store itself).
 * - `update`: one update of one record (created when missing), as a
 *   short-lived process does it (a CLI call, a crash-looping worker): it
 *   SIGKILLs itself `lifeMs` after it loaded, done or not, and may follow a
 *   kill plan. Prints `done {"epoch":n}`.
 * - `owner`: opens the store `exclusive`, makes `count` updates of one record
 *   one after another (printing `upd <epoch>` as each resolves), prints
 *   `holding`, and stays alive holding the directory until it is killed;
 *   or a kill plan ends it earlier.
 * - `probe`: lists the store, reads some keys, updates others, reads the
 *   quarantine, and prints what it saw: run in a child so a read that blocks (a FIFO) shows up as a
 *   child the parent had to kill, not as a hung test runner.
 */
import { createClient, type OperationRecord } from '../../src/node.js';
import { sampleRecord } from '../../src/store/contract.js';
import { type WriteStep, writeSteps } from '../../src/store/file/durable.js';
import { fileStore } from '../helpers/machine.js';

export type KillPlan =
  /** At the n-th `attempt:started` (recorded durably, not yet sent), optionally `afterMs` later (mid-request). */
  | { at: 'attempt'; n: number; afterMs?: number }
  /** At the n-th time a durable write reaches `step`. */
  | { at: 'write'; step: WriteStep; n: number };

export type WorkerConfig =
  | {
      mode: 'run';
      dir: string;
      baseUrl: string;
      /** Request path; lanes use their own so server faults can target them. */
      path: string;
      /** New operations to enqueue; their bodies carry `${opPrefix}-${i}`. */
      enqueue: number;
      opPrefix: string;
      leaseMs: number;
      attemptTimeoutMs: number;
      concurrency: number;
      kill?: KillPlan;
      /** Open the store `exclusive`. */
      exclusive?: boolean;
    }
  | { mode: 'increment'; dir: string; key: string; count: number }
  | { mode: 'update'; dir: string; key: string; lifeMs?: number; kill?: KillPlan }
  | { mode: 'probe'; dir: string; keys: string[]; bump?: string[] }
  | { mode: 'owner'; dir: string; key: string; count: number; kill?: KillPlan };

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL to ourselves is delivered before the syscall returns; never reached.
  throw new Error('unreachable');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(config: Extract<WorkerConfig, { mode: 'run' }>): Promise<void> {
  const store = fileStore({ dir: config.dir, exclusive: config.exclusive === true });
  const client = createClient({
    store,
    baseUrl: config.baseUrl,
    leaseMs: config.leaseMs,
    concurrency: config.concurrency,
    // Credentials come from a callback for each attempt and are never stored.
    headers: () => ({ authorization: 'Bearer crash-secret' }),
    policy: {
      attemptTimeoutMs: config.attemptTimeoutMs,
      // Crashes close attempts as ambiguous; they must not exhaust the operation.
      maxAttempts: 1_000,
      deadlineMs: 30 * 60_000,
      backoff: { baseDelayMs: 5, maxDelayMs: 50 },
      retryAfter: { jitterMs: 10 },
    },
  });

  const plan = config.kill;
  if (plan?.at === 'attempt') {
    let seen = 0;
    client.on('attempt:started', () => {
      if (++seen !== plan.n) return;
      if (plan.afterMs === undefined) die();
      setTimeout(die, plan.afterMs);
    });
  } else {
    planWriteKill(plan);
  }
  print('ready');

  const settled: Promise<unknown>[] = [];
  for (let i = 0; i < config.enqueue; i++) {
    const op = `${config.opPrefix}-${i}`;
    const enqueued = await client.enqueue({ method: 'POST', url: config.path, json: { op, amount: 100 + i } });
    print(`enq ${enqueued.key} ${op}`);
    settled.push(enqueued.settled);
  }

  // Drive everything to a terminal state, ours and our predecessors'. An
  // operation a dead process held is skipped by resume() until its lease
  // expires, hence the loop.
  let rounds = 0;
  for (;;) {
    rounds++;
    await client.resume();
    const open = await store.list({ state: ['pending', 'in_flight'] });
    if (open.length === 0) break;
    await sleep(25);
  }
  await Promise.all(settled);
  const states: Record<string, number> = {};
  for (const record of await store.list()) states[record.state] = (states[record.state] ?? 0) + 1;
  print(`done ${JSON.stringify({ rounds, states })}`);
  await client.close();
}

async function increment(config: Extract<WorkerConfig, { mode: 'increment' }>): Promise<void> {
  const store = fileStore({ dir: config.dir });
  print('ready');
  await Promise.all(
    Array.from({ length: config.count }, () =>
      store.update(config.key, (current: OperationRecord | undefined) =>
        current === undefined ? undefined : { ...current, epoch: current.epoch + 1 },
      ),
    ),
  );
  print('done {}');
  await store.close();
}

/** Kills this process at the plan's write step (attempt plans need a client: `run` only). */
function planWriteKill(plan: KillPlan | undefined): void {
  if (plan?.at !== 'write') return;
  let seen = 0;
  writeSteps.hook = (step) => {
    if (step === plan.step && ++seen === plan.n) die();
  };
}

async function updateOnce(config: Extract<WorkerConfig, { mode: 'update' }>): Promise<void> {
  // The life of a short-lived process, counted once it is loaded (so a slow start cannot eat it).
  if (config.lifeMs !== undefined) setTimeout(die, config.lifeMs);
  planWriteKill(config.kill);
  const store = fileStore({ dir: config.dir });
  print('ready');
  const record = await store.update(config.key, (current: OperationRecord | undefined) =>
    current === undefined ? sampleRecord(config.key) : { ...current, epoch: current.epoch + 1 },
  );
  await store.close();
  print(`done ${JSON.stringify({ epoch: record?.epoch })}`);
}

async function owner(config: Extract<WorkerConfig, { mode: 'owner' }>): Promise<void> {
  planWriteKill(config.kill);
  const store = fileStore({ dir: config.dir, exclusive: true });
  print('ready');
  for (let i = 0; i < config.count; i++) {
    const record = await store.update(config.key, (current: OperationRecord | undefined) =>
      current === undefined ? sampleRecord(config.key) : { ...current, epoch: current.epoch + 1 },
    );
    print(`upd ${record?.epoch}`);
  }
  print('holding');
  // Alive, owning the directory, until the parent kills it.
  await new Promise(() => setInterval(() => undefined, 60_000));
}

async function probe(config: Extract<WorkerConfig, { mode: 'probe' }>): Promise<void> {
  const store = fileStore({ dir: config.dir });
  const reported: string[] = [];
  store.onQuarantine((entry) => reported.push(`${entry.id}: ${entry.problems.join('; ')}`));
  print('ready');
  const listed = (await store.list()).map((record) => record.key).sort();
  const got: Record<string, number | null> = {};
  for (const key of config.keys) got[key] = (await store.get(key))?.epoch ?? null;
  const bumped: Record<string, number | null> = {};
  for (const key of config.bump ?? []) {
    const next = await store.update(key, (current) => (current ? { ...current, epoch: current.epoch + 1 } : current));
    bumped[key] = next?.epoch ?? null;
  }
  const quarantined = (await store.quarantined()).map((entry) => `${entry.id}: ${entry.problems.join('; ')}`);
  await store.close();
  print(`done ${JSON.stringify({ listed, got, bumped, reported, quarantined })}`);
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const main = { run, increment, update: updateOnce, probe, owner } as const;
(main[config.mode] as (c: WorkerConfig) => Promise<void>)(config).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
