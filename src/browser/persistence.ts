/**
 * Keeping the queue: persistent storage, and noticing when it was lost.
 *
 * A browser may evict an origin's IndexedDB under storage pressure (unless
 * `navigator.storage.persist()` was granted), and users clear site data.
 * An empty database then looks exactly like a new one: operations the user
 * confirmed would vanish without a word. So the client keeps two markers:
 *
 * - one record in the IndexedDB database itself, under `MARKER_KEY` (the
 *   operation store only reads keys under its own prefixes), created once,
 *   atomically "if absent" so that tabs starting together agree on it;
 * - a copy of its id in `localStorage`, which lives apart from IndexedDB.
 *
 * If `localStorage` remembers a database that no longer has its marker (or
 * has another one), the database was wiped: the client reports
 * `store:wiped` instead of silently starting empty. When both are gone
 * (the user cleared everything, or Safari's 7-day cap on script-writable
 * storage) there is nothing left to compare with; that reads as a first use.
 *
 * The marker is read and written through a short-lived connection of our
 * own, closed at once, so it never blocks another tab's upgrade or delete.
 */
import type { KeyValueStorage, StorageManagerLike } from './env.js';

/** Key of the marker record inside the database's object store (outside the store's `r:` / `q:` prefixes). */
export const MARKER_KEY = 'm:marker';
const LOCAL_PREFIX = 'oncely:marker:';

interface Marker {
  id: string;
  createdAt: number;
}

/** What was lost: the database with marker `markerId`, first used at `since`. */
export interface WipeReport {
  database: string;
  /** The id of the marker the lost database had. */
  markerId: string;
  /** When the lost database was first used (ms since the epoch). */
  since: number;
  detectedAt: number;
}

export type WipeCheck =
  | { status: 'fresh' | 'intact' }
  | { status: 'wiped'; report: WipeReport }
  /** No IndexedDB or no localStorage here: a wipe cannot be told from a first use. */
  | { status: 'unavailable'; reason: string };

export interface WipeCheckOptions {
  database: string;
  indexedDB: IDBFactory | undefined;
  localStorage: KeyValueStorage | undefined;
  /**
   * The database's object store: `INDEXEDDB_LAYOUT.objectStore`, the one `indexedDbStore` uses. Passed in, not
   * imported, so that this module (loaded with `import()`) shares no chunk with the store.
   */
  objectStore: string;
  now: () => number;
  uuid: () => string;
}

/** Compares the database's marker with localStorage's memory of it; creates both when missing. */
export async function checkForWipe(options: WipeCheckOptions): Promise<WipeCheck> {
  const { database, localStorage } = options;
  if (options.indexedDB === undefined) return { status: 'unavailable', reason: 'no IndexedDB' };
  let remembered: Marker | undefined;
  try {
    remembered = parseMarker(localStorage?.getItem(`${LOCAL_PREFIX}${database}`) ?? null);
  } catch {
    return { status: 'unavailable', reason: 'localStorage cannot be read' };
  }
  const candidate: Marker = { id: options.uuid(), createdAt: options.now() };
  const stored = await ensureMarker(options.indexedDB, database, options.objectStore, candidate);
  try {
    if (localStorage === undefined) return { status: 'unavailable', reason: 'no localStorage' };
    if (remembered?.id !== stored.id) localStorage.setItem(`${LOCAL_PREFIX}${database}`, JSON.stringify(stored));
  } catch {
    return { status: 'unavailable', reason: 'localStorage cannot be written' };
  }
  if (remembered === undefined) return { status: stored.id === candidate.id ? 'fresh' : 'intact' };
  if (remembered.id === stored.id) return { status: 'intact' };
  return {
    status: 'wiped',
    report: { database, markerId: remembered.id, since: remembered.createdAt, detectedAt: options.now() },
  };
}

function parseMarker(text: string | null): Marker | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Partial<Marker>;
    if (typeof value.id === 'string' && typeof value.createdAt === 'number') {
      return { id: value.id, createdAt: value.createdAt };
    }
  } catch {
    // A foreign or damaged value: treat it as no memory at all.
  }
  return undefined;
}

/** Reads the marker, writing `candidate` first when there is none, in one readwrite transaction. */
function ensureMarker(factory: IDBFactory, database: string, objectStore: string, candidate: Marker): Promise<Marker> {
  return new Promise<Marker>((resolve, reject) => {
    const opening = factory.open(database);
    // Same shape as idb-keyval's `createStore`: a new database gets the object store.
    opening.onupgradeneeded = () => {
      if (!opening.result.objectStoreNames.contains(objectStore)) opening.result.createObjectStore(objectStore);
    };
    opening.onerror = () => reject(opening.error);
    opening.onsuccess = () => {
      const db = opening.result;
      db.onversionchange = () => db.close();
      let tx: IDBTransaction;
      try {
        tx = db.transaction(objectStore, 'readwrite');
      } catch (error) {
        db.close();
        reject(error);
        return;
      }
      let marker = candidate;
      const store = tx.objectStore(objectStore);
      const read = store.get(MARKER_KEY);
      read.onsuccess = () => {
        const existing = read.result as Partial<Marker> | undefined;
        if (existing !== undefined && typeof existing.id === 'string' && typeof existing.createdAt === 'number') {
          marker = { id: existing.id, createdAt: existing.createdAt };
        } else {
          store.put(candidate, MARKER_KEY);
        }
      };
      tx.oncomplete = () => {
        db.close();
        resolve(marker);
      };
      tx.onabort = () => {
        db.close();
        reject(tx.error ?? new Error('marker transaction aborted'));
      };
    };
  });
}

/**
 * Asks the browser to keep this origin's storage under pressure. Resolves
 * with the answer, or undefined where the Storage API is missing.
 */
export async function requestPersistence(storage: StorageManagerLike | undefined): Promise<boolean | undefined> {
  if (storage === undefined) return undefined;
  if (typeof storage.persisted === 'function' && (await storage.persisted())) return true;
  if (typeof storage.persist !== 'function') return undefined;
  return storage.persist();
}
