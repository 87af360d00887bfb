/**
 * Filling a store with operations "while offline": the real client writes
 * each operation ahead with `enqueue`, its attempt finds no network (a
 * connection-refused error, so it provably was not sent), and the client is
 * closed. The records stay `pending`, unleased, with one `not_sent` attempt:
 * exactly what a process that buffered work offline leaves for whoever
 * resumes it. Nothing reaches the server.
 */
import { createClient } from '../../src/node.js';
import { fileStore } from './machine.js';

export interface OfflineOperation {
  /** A write names its method (oncely, like fetch, defaults to `GET`). */
  method: string;
  url: string;
  json: unknown;
}

function connectionRefused(): Error {
  const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  return new TypeError('fetch failed', { cause });
}

/** Enqueues `operations` into the file store at `dir` through a client that cannot reach the network; resolves with their keys. */
export async function enqueueOffline(
  dir: string,
  baseUrl: string,
  operations: readonly OfflineOperation[],
): Promise<string[]> {
  let goOffline!: () => void;
  const offline = new Promise<void>((resolve) => {
    goOffline = resolve;
  });
  const client = createClient({
    store: fileStore({ dir }),
    baseUrl,
    // Every attempt waits until all operations are written, then fails as not sent.
    fetch: async () => {
      await offline;
      throw connectionRefused();
    },
    policy: { backoff: { baseDelayMs: 1, maxDelayMs: 1 } },
  });
  const keys: string[] = [];
  const batch = 50;
  for (let i = 0; i < operations.length; i += batch) {
    const enqueued = await Promise.all(operations.slice(i, i + batch).map((op) => client.enqueue(op)));
    keys.push(...enqueued.map((e) => e.key));
  }
  goOffline();
  // Closing stops every loop at its next step, releases its lease and closes the store.
  await client.close();
  return keys;
}
