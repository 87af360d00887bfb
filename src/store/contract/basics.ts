/**
 * The contract's basic cases: what every store must do with one handle
 * (read, write, atomic update, delete, list with filters, every allowed key
 * character).
 */
import { check, same } from './assert.js';
import type { ContractCase, StoreContractOptions } from './options.js';
import { sampleRecord } from './sample.js';

export function basicCases(options: StoreContractOptions): ContractCase[] {
  const parallelism = options.parallelism ?? 25;
  return [
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
      // A sweep or discard judges what it read; a retry that reopened the record in between must survive.
      name: 'delete with onlyIf deletes only while the record as stored satisfies it',
      run: async () => {
        const store = await options.create();
        const finished = (r: { state: string }) => r.state === 'succeeded';
        await store.put(sampleRecord('k1'));
        await store.delete('k1', { onlyIf: finished });
        check((await store.get('k1')) !== undefined, 'deleted although the condition did not hold');
        await store.update('k1', (r) => r && { ...r, state: 'succeeded' });
        await store.delete('k1', { onlyIf: finished });
        check((await store.get('k1')) === undefined, 'kept although the condition held');
        await store.delete('k1', { onlyIf: finished });
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
}
