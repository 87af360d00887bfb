/**
 * What the client knows about its storage, for `status().storage`: whether
 * the browser granted persistence, and whether the database was found
 * wiped. Runs the checks of persistence.ts at the client's moments
 * (start-up, the page becoming visible, the periodic pass) and reports a
 * wipe once: as `store:wiped`, to `onStoreWiped`, and to the other tabs
 * (which could not notice by themselves: the markers are renewed by then).
 *
 * The checks themselves are in persistence.ts, loaded with `import()` by the
 * first of them (at start-up): a page's first send never waits for it, since
 * neither the wipe check nor `persist()` decides anything about an
 * operation. A load that fails is a `background:error` like a failed check;
 * the next check (the page becoming visible, the periodic pass) loads again.
 */
import { lazy } from '../flow/calls/lazy.js';
import type { Runtime } from '../runtime.js';
import { INDEXEDDB_LAYOUT } from '../store/indexeddb/layout.js';
import type { KeyValueStorage, StorageManagerLike } from './env.js';
import type { BrowserEmitter } from './events.js';
import type { WipeReport } from './persistence.js';

export interface StorageWatchOptions {
  database: string;
  /** The database to check; undefined when the store is not the default one (wipe detection covers that one only). */
  indexedDB: IDBFactory | undefined;
  localStorage: KeyValueStorage | undefined;
  runtime: Pick<Runtime, 'now' | 'uuid' | 'track'>;
  events: Pick<BrowserEmitter, 'emit'>;
  onStoreWiped: ((report: WipeReport) => void) | undefined;
  /** Tells the other tabs about a wipe found here. */
  announce: (report: WipeReport) => void;
  /** Called when what `status()` shows changed. */
  changed: () => void;
}

export class StorageWatch {
  readonly #options: StorageWatchOptions;
  #persisted: boolean | undefined;
  #wiped: WipeReport | undefined;
  readonly #checks: () => Promise<typeof import('./persistence.js')>;

  constructor(options: StorageWatchOptions) {
    this.#options = options;
    this.#checks = lazy(() => import('./persistence.js'), options.runtime);
  }

  get status(): { persisted: boolean | undefined; wiped: WipeReport | undefined } {
    return { persisted: this.#persisted, wiped: this.#wiped };
  }

  /** Looks for a wipe; never rejects (a failure is a `background:error`). */
  async check(): Promise<void> {
    const { database, indexedDB, localStorage, runtime } = this.#options;
    try {
      const { checkForWipe } = await this.#checks();
      const check = await checkForWipe({
        database,
        indexedDB,
        localStorage,
        objectStore: INDEXEDDB_LAYOUT.objectStore,
        now: runtime.now,
        uuid: runtime.uuid,
      });
      if (check.status === 'wiped') this.report(check.report, true);
    } catch (error) {
      this.#failed('wipe check', error);
    }
  }

  /** A wipe found here (`announce`) or by another tab; reported once per lost database. */
  report(report: WipeReport, announce: boolean): void {
    if (this.#wiped?.markerId === report.markerId) return;
    this.#wiped = report;
    this.#options.events.emit('store:wiped', report);
    try {
      this.#options.onStoreWiped?.(report);
    } catch (error) {
      this.#failed('onStoreWiped', error);
    }
    if (announce) this.#options.announce(report);
    this.#options.changed();
  }

  /** Asks for persistent storage; never rejects. */
  async persist(storage: StorageManagerLike | undefined): Promise<void> {
    try {
      const { requestPersistence } = await this.#checks();
      const answer = await requestPersistence(storage);
      if (answer === undefined) return;
      this.#persisted = answer;
      this.#options.events.emit('storage:persisted', { persisted: answer });
    } catch (error) {
      this.#failed('storage.persist()', error);
    }
  }

  #failed(during: string, error: unknown): void {
    this.#options.events.emit('background:error', { error, during });
  }
}
