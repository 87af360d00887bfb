/**
 * The store contract: one suite every store must pass (memory, file,
 * IndexedDB, and yours). Framework-agnostic: it returns named async cases;
 * map them onto your test runner.
 *
 * @example
 * for (const c of storeContract({ create: () => memoryStore() })) it(c.name, c.run);
 */
import canonicalize from 'canonicalize';
import { type OperationRecord, RECORD_VERSION } from '../model.js';
import { type OperationStore, summaryOf } from './store.js';

export interface StoreContractOptions {
  /** A fresh, empty store. */
  create: () => OperationStore | Promise<OperationStore>;
  /**
   * Opens another handle on the same storage as `store` (another process,
   * tab or restart). Enables the durability and cross-handle cases.
   */
  reopen?: (store: OperationStore) => OperationStore | Promise<OperationStore>;
  /** Overwrites the stored bytes of `key` with `text`. Enables the quarantine cases. */
  corrupt?: (store: OperationStore, key: string, text: string) => void | Promise<void>;
  /** Parallel updaters for the atomicity case. @default 25 */
  parallelism?: number;
}

export interface ContractCase {
  name: string;
  run: () => Promise<void>;
}

/** A valid record for `key`, for tests. */
export function sampleRecord(key: string, overrides: Partial<OperationRecord> = {}): OperationRecord {
  return {
    v: RECORD_VERSION,
    key,
    request: {
      method: 'POST',
      url: 'https://api.example.test/payments',
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: '{"amount":4800,"currency":"EUR"}' },
    },
    fingerprint: 'a'.repeat(64),
    policy: 'default',
    createdAt: 1_000,
    deadlineAt: 61_000,
    state: 'pending',
    epoch: 0,
    attempts: [],
    nextAttemptAt: 1_000,
    backoff: { retries: 0, lastDelayMs: 0 },
    ...overrides,
  };
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`store contract: ${message}`);
}

function same(actual: unknown, expected: unknown, message: string): void {
  // Canonical JSON: stores may return keys in another order.
  const a = canonicalize(actual) ?? 'undefined';
  const e = canonicalize(expected) ?? 'undefined';
  check(a === e, `${message}\n  expected ${e}\n  actual   ${a}`);
}

export function storeContract(options: StoreContractOptions): ContractCase[] {
  const parallelism = options.parallelism ?? 25;
  const cases: ContractCase[] = [
    {
      name: 'get of a missing key resolves undefined',
      run: async () => {
        const store = await options.create();
        check((await store.get('missing')) === undefined, 'expected undefined');
      },
    },
    {
      name: 'put then get returns an equal record',
      run: async () => {
        const store = await options.create();
        const record = sampleRecord('k1', { meta: { userId: 'u1' }, scope: 'cart-9' });
        await store.put(record);
        same(await store.get('k1'), record, 'round trip changed the record');
      },
    },
    {
      name: 'a returned record cannot change the stored one by reference',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        const first = await store.get('k1');
        check(first !== undefined, 'missing');
        // A store may hand out copies, or frozen records (then the write throws); never its own state.
        try {
          first.state = 'failed';
        } catch (error) {
          check(error instanceof TypeError && Object.isFrozen(first), `unexpected ${String(error)}`);
        }
        same((await store.get('k1'))?.state, 'pending', 'stored state changed through a reference');
      },
    },
    {
      name: 'update creates when absent and returns the stored record',
      run: async () => {
        const store = await options.create();
        const created = await store.update('k1', (current) => current ?? sampleRecord('k1'));
        same(created, sampleRecord('k1'), 'update did not return the created record');
        same(await store.get('k1'), sampleRecord('k1'), 'created record not stored');
      },
    },
    {
      name: 'update returning the current record writes nothing',
      run: async () => {
        const store = await options.create();
        check((await store.update('none', (current) => current)) === undefined, 'expected undefined for absent');
        check((await store.get('none')) === undefined, 'a no-op update created a record');
      },
    },
    {
      name: 'update that throws changes nothing and rejects',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        let rejected = false;
        try {
          await store.update('k1', () => {
            throw new Error('refused');
          });
        } catch (error) {
          rejected = (error as Error).message === 'refused';
        }
        check(rejected, 'update did not reject with the thrown error');
        same((await store.get('k1'))?.epoch, 0, 'record changed');
      },
    },
    {
      name: `update is atomic: ${parallelism} concurrent increments all land`,
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        const other = options.reopen === undefined ? store : await options.reopen(store);
        await Promise.all(
          Array.from({ length: parallelism }, (_, i) =>
            (i % 2 === 0 ? store : other).update('k1', (current) =>
              current === undefined ? undefined : { ...current, epoch: current.epoch + 1 },
            ),
          ),
        );
        same((await store.get('k1'))?.epoch, parallelism, 'lost updates');
      },
    },
    {
      name: 'delete removes the record; deleting a missing key is fine',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        await store.delete('k1');
        await store.delete('k1');
        check((await store.get('k1')) === undefined, 'record still there');
      },
    },
    {
      name: 'list filters by state, due time and scope, earliest first, with a limit',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('a', { nextAttemptAt: 300 }));
        await store.put(sampleRecord('b', { nextAttemptAt: 100, scope: 's' }));
        await store.put(sampleRecord('c', { nextAttemptAt: 200, state: 'succeeded' }));
        await store.put(sampleRecord('d', { nextAttemptAt: 900 }));
        same(
          (await store.list()).map((r) => r.key),
          ['b', 'c', 'a', 'd'],
          'list order',
        );
        same(
          (await store.list({ state: 'pending' })).map((r) => r.key),
          ['b', 'a', 'd'],
          'state filter',
        );
        same(
          (await store.list({ state: ['succeeded'] })).map((r) => r.key),
          ['c'],
          'state array filter',
        );
        same(
          (await store.list({ dueBy: 300 })).map((r) => r.key),
          ['b', 'c', 'a'],
          'dueBy filter',
        );
        same(
          (await store.list({ scope: 's' })).map((r) => r.key),
          ['b'],
          'scope filter',
        );
        same(
          (await store.list({ limit: 2 })).map((r) => r.key),
          ['b', 'c'],
          'limit',
        );
      },
    },
    {
      name: 'keys with every allowed character round-trip',
      run: async () => {
        const store = await options.create();
        const key = 'Ab9_-.:x';
        await store.put(sampleRecord(key));
        same((await store.get(key))?.key, key, 'key changed');
        same(
          (await store.list()).map((r) => r.key),
          [key],
          'list lost the key',
        );
      },
    },
  ];

  cases.push({
    name: 'writing an invalid record rejects and writes nothing',
    run: async () => {
      const store = await options.create();
      const invalid = { ...sampleRecord('bad'), state: 'exploded' } as unknown as OperationRecord;
      let rejected = false;
      try {
        await store.put(invalid);
      } catch {
        rejected = true;
      }
      check(rejected, 'put of an invalid record resolved');
      check((await store.get('bad')) === undefined, 'an invalid record was stored');
      let updateRejected = false;
      try {
        await store.update('bad', () => invalid);
      } catch {
        updateRejected = true;
      }
      check(updateRejected, 'update to an invalid record resolved');
      check((await store.get('bad')) === undefined, 'an invalid record was stored by update');
    },
  });

  cases.push({
    name: 'listSummaries, when the store has it, matches list for every filter',
    run: async () => {
      const store = await options.create();
      if (store.listSummaries === undefined) return;
      await store.put(sampleRecord('a', { nextAttemptAt: 300, scope: 's', lease: { owner: 'o', until: 9 } }));
      await store.put(sampleRecord('b', { nextAttemptAt: 100, state: 'succeeded', retainUntil: 50 }));
      await store.put(sampleRecord('c', { nextAttemptAt: 200 }));
      for (const filter of [{}, { state: 'pending' as const }, { dueBy: 200 }, { scope: 's' }, { limit: 2 }]) {
        same(
          await store.listSummaries(filter),
          (await store.list(filter)).map(summaryOf),
          `filter ${JSON.stringify(filter)}`,
        );
      }
    },
  });

  if (options.reopen !== undefined) {
    const reopen = options.reopen;
    cases.push({
      name: 'a write is visible through another handle once it resolves (durable)',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1', { state: 'in_flight' }));
        const again = await reopen(store);
        same((await again.get('k1'))?.state, 'in_flight', 'not visible through another handle');
      },
    });
  }

  if (options.corrupt !== undefined) {
    const corrupt = options.corrupt;
    cases.push(
      {
        name: 'a corrupt record is quarantined and reported; the others keep working',
        run: async () => {
          const store = await options.create();
          const reports: string[] = [];
          store.onQuarantine((entry) => reports.push(entry.id));
          await store.put(sampleRecord('good'));
          await store.put(sampleRecord('bad'));
          await store.put(sampleRecord('truncated'));
          await corrupt(store, 'bad', '{"v":1,"key":"bad","state":"exploded"}');
          await corrupt(store, 'truncated', '{"v":1,"key":"trunc');
          // Valid JSON of a valid record, but stored under another key: not trusted either.
          await store.put(sampleRecord('elsewhere'));
          await corrupt(store, 'elsewhere', JSON.stringify(sampleRecord('other')));
          same(
            (await store.list()).map((r) => r.key),
            ['good'],
            'list must skip quarantined records',
          );
          check((await store.get('bad')) === undefined, 'corrupt record was returned');
          const quarantined = (await store.quarantined()).map((q) => q.id).sort();
          same(quarantined, ['bad', 'elsewhere', 'truncated'], 'quarantine list');
          same([...new Set(reports)].sort(), ['bad', 'elsewhere', 'truncated'], 'quarantine reports');
          await store.update('good', (current) => (current === undefined ? undefined : { ...current, epoch: 7 }));
          same((await store.get('good'))?.epoch, 7, 'healthy record stopped working');
        },
      },
      {
        name: 'a quarantined record keeps its raw text for forensics',
        run: async () => {
          const store = await options.create();
          await store.put(sampleRecord('bad'));
          await corrupt(store, 'bad', 'garbage!');
          await store.get('bad');
          const entry = (await store.quarantined()).find((q) => q.id === 'bad');
          check(entry !== undefined, 'not quarantined');
          check(entry.raw.includes('garbage!'), 'raw text lost');
          check(entry.problems.length > 0, 'no problems reported');
        },
      },
    );
  }
  return cases;
}
