/**
 * The contract's integrity cases: invalid writes are refused, summaries
 * agree with records, writes are durable across handles, and a corrupt
 * record is quarantined without breaking the others. The last two run only
 * when the store's author says how to reopen or corrupt it.
 */
import type { OperationRecord } from '../../model.js';
import { summaryOf } from '../store.js';
import { check, same } from './assert.js';
import { acrossHandles } from './handles.js';
import type { ContractCase, StoreContractOptions } from './options.js';
import { sampleRecord } from './sample.js';

export function integrityCases(options: StoreContractOptions): ContractCase[] {
  const cases: ContractCase[] = [];
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

  cases.push(
    ...acrossHandles(
      options,
      'a write is visible through another handle once it resolves (durable)',
      async (store) => {
        await store.put(sampleRecord('k1', { state: 'in_flight' }));
      },
      async (again) => {
        same((await again.get('k1'))?.state, 'in_flight', 'not visible through another handle');
      },
    ),
  );

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
        // Written by another version or by hand: checking it must not overflow the stack on any path.
        name: 'a record nested too deep to check is quarantined; the others keep working',
        run: async () => {
          const store = await options.create();
          await store.put(sampleRecord('good'));
          await store.put(sampleRecord('deep'));
          const nested = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
          await corrupt(
            store,
            'deep',
            JSON.stringify(sampleRecord('deep', { meta: { x: 'DEEP' } })).replace('"DEEP"', nested),
          );
          same(
            (await store.list()).map((r) => r.key),
            ['good'],
            'list must skip the deep record',
          );
          same(
            (await store.quarantined()).map((q) => q.id),
            ['deep'],
            'quarantine list',
          );
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
