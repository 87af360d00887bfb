/**
 * Page script for indexeddb-store.browser.test.ts, bundled by esbuild and run
 * in real Chromium. It imports the store through the public browser entry
 * (so that entry must bundle for the browser) and exposes `window.oncely`
 * for the test to drive with `page.evaluate`.
 */
import { createStore, set } from 'idb-keyval';
import type { OperationStore } from '../../src/browser.js';
import { sampleRecord, storeContract } from '../../src/store/contract.js';
import { INDEXEDDB_LAYOUT, indexedDbStore } from '../../src/store/indexeddb.js';

export interface CaseResult {
  name: string;
  ok: boolean;
  error?: string;
  ms: number;
}

export interface ContractReport {
  results: CaseResult[];
  /** Readwrite transactions the store opened while the contract ran. */
  readwrite: number;
  /** Of those, how many report `durability === 'strict'`. */
  strict: number;
  /** `IDBTransaction.prototype.durability` exists in this browser. */
  durabilitySupported: boolean;
}

export interface CounterReport {
  epoch: number;
  /** One letter per increment, in commit order (the tab that made it). */
  order: string;
}

export interface IncrementOptions {
  name: string;
  key: string;
  /** One letter naming this tab. */
  tab: string;
  count: number;
  /** `Date.now()` at which to start, so that both tabs start together. */
  startAt: number;
}

export interface IncrementWindow {
  /** `Date.now()` when this tab issued its updates. */
  issuedAt: number;
  /** `Date.now()` when the last of them resolved. */
  doneAt: number;
}

export interface PageHarness {
  runContract(): Promise<ContractReport>;
  seed(name: string, key: string): Promise<void>;
  increment(options: IncrementOptions): Promise<IncrementWindow>;
  read(name: string, key: string): Promise<CounterReport | undefined>;
}

declare global {
  interface Window {
    oncely?: PageHarness;
  }
}

/** Records the durability of every readwrite transaction opened while `recording`. */
let recording = false;
const readwrite: string[] = [];
const openTransaction = IDBDatabase.prototype.transaction;
IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<IDBDatabase['transaction']>) {
  const tx = openTransaction.apply(this, args);
  if (recording && tx.mode === 'readwrite') readwrite.push(tx.durability);
  return tx;
};

let databases = 0;
const nameOf = new WeakMap<OperationStore, string>();

function open(name: string): OperationStore {
  const store = indexedDbStore({ name });
  nameOf.set(store, name);
  return store;
}

function requireName(store: OperationStore): string {
  const name = nameOf.get(store);
  if (name === undefined) throw new Error('not a store made by this page');
  return name;
}

const harness: PageHarness = {
  async runContract() {
    const run = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const cases = storeContract({
      create: () => open(`contract-${run}-${++databases}`),
      reopen: (store) => open(requireName(store)),
      corrupt: async (store, key, text) => {
        // A foreign writer (not the store): its transaction is not counted.
        recording = false;
        try {
          await set(
            `${INDEXEDDB_LAYOUT.recordPrefix}${key}`,
            text,
            createStore(requireName(store), INDEXEDDB_LAYOUT.objectStore),
          );
        } finally {
          recording = true;
        }
      },
    });
    readwrite.length = 0;
    recording = true;
    const results: CaseResult[] = [];
    try {
      for (const c of cases) {
        const started = performance.now();
        try {
          await c.run();
          results.push({ name: c.name, ok: true, ms: performance.now() - started });
        } catch (error) {
          const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
          results.push({ name: c.name, ok: false, error: message, ms: performance.now() - started });
        }
      }
    } finally {
      recording = false;
    }
    return {
      results,
      readwrite: readwrite.length,
      strict: readwrite.filter((d) => d === 'strict').length,
      durabilitySupported: 'durability' in IDBTransaction.prototype,
    };
  },

  async seed(name, key) {
    await open(name).put(sampleRecord(key, { meta: { order: '' } }));
  },

  async increment({ name, key, tab, count, startAt }) {
    const store = open(name);
    await store.get(key); // open the connection before the start line
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
    const issuedAt = Date.now();
    await Promise.all(
      Array.from({ length: count }, () =>
        store.update(key, (current) =>
          current === undefined
            ? undefined
            : { ...current, epoch: current.epoch + 1, meta: { order: `${String(current.meta?.order ?? '')}${tab}` } },
        ),
      ),
    );
    return { issuedAt, doneAt: Date.now() };
  },

  async read(name, key) {
    const record = await open(name).get(key);
    return record === undefined ? undefined : { epoch: record.epoch, order: String(record.meta?.order ?? '') };
  },
};

window.oncely = harness;
