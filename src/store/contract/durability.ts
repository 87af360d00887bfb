/**
 * The contract's cases for the durability hint (`WriteOptions`): a relaxed
 * write is a write like any other for every reader and every later update;
 * only its way to stable storage may differ. That a durable write covers the
 * relaxed ones before it after a power cut cannot be shown through the
 * interface alone: each store that honours the hint proves it in its own
 * tests (the file store's simulate the power cut).
 */
import type { OperationRecord } from '../../model.js';
import type { WriteOptions } from '../store.js';
import { check, same } from './assert.js';
import { acrossHandles } from './handles.js';
import type { ContractCase, StoreContractOptions } from './options.js';
import { sampleRecord } from './sample.js';

const RELAXED: WriteOptions = { durability: 'relaxed' };
const bump = (current: OperationRecord | undefined): OperationRecord | undefined =>
  current === undefined ? undefined : { ...current, epoch: current.epoch + 1 };

export function durabilityCases(options: StoreContractOptions): ContractCase[] {
  const parallelism = options.parallelism ?? 25;
  const cases: ContractCase[] = [
    {
      name: 'a relaxed write is visible to reads as soon as it resolves',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'), RELAXED);
        same(await store.get('k1'), sampleRecord('k1'), 'a relaxed put is not visible');
        const updated = await store.update('k1', bump, RELAXED);
        same(updated?.epoch, 1, 'a relaxed update did not resolve with the stored record');
        same((await store.get('k1'))?.epoch, 1, 'a relaxed update is not visible');
        same(
          (await store.list()).map((r) => [r.key, r.epoch]),
          [['k1', 1]],
          'list does not show the relaxed update',
        );
      },
    },
    {
      name: 'relaxed updates are atomic too: concurrent increments all land',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        await Promise.all(
          Array.from({ length: parallelism }, (_, i) => store.update('k1', bump, i % 2 === 0 ? RELAXED : undefined)),
        );
        same((await store.get('k1'))?.epoch, parallelism, 'a relaxed increment was lost');
      },
    },
    {
      name: 'a durable write after relaxed ones leaves every one of them in place',
      run: async () => {
        const store = await options.create();
        await store.put(sampleRecord('k1'));
        await store.update('k1', bump, RELAXED);
        await store.put(sampleRecord('k2'), RELAXED);
        await store.put(sampleRecord('k3'));
        same(
          (await store.list()).map((r) => [r.key, r.epoch]).sort(),
          [
            ['k1', 1],
            ['k2', 0],
            ['k3', 0],
          ],
          'a relaxed write is missing after a durable one',
        );
      },
    },
  ];
  cases.push(
    ...acrossHandles(
      options,
      'a relaxed write is visible through another handle, and updates there build on it',
      async (store) => {
        await store.put(sampleRecord('k1'));
        await store.update('k1', bump, RELAXED);
      },
      async (again, store) => {
        same((await again.get('k1'))?.epoch, 1, 'a relaxed write is not visible through another handle');
        const next = await again.update('k1', bump, RELAXED);
        same(next?.epoch, 2, 'an update through another handle did not build on the relaxed write');
        check((await store.get('k1'))?.epoch === 2, 'the first handle does not see the other handle’s write');
      },
    ),
  );
  return cases;
}
