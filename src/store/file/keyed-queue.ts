/**
 * In-process serialization per key: updates of one key run one after
 * another before they even try the file lock, so a process never contends
 * with itself on a claim file (and never polls for its own lock). Shared by
 * every store instance on the same directory in this process.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    const result = previous === undefined ? task() : previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Whether a task of `key` is queued or running. */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }

  /** Resolves when every task queued so far has settled. */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all(this.#tails.values());
  }
}

const byDirectory = new Map<string, KeyedQueue>();

/** The queue of a store directory (by its real path), created on first use. */
export function queueFor(realDir: string): KeyedQueue {
  let queue = byDirectory.get(realDir);
  if (queue === undefined) {
    queue = new KeyedQueue();
    byDirectory.set(realDir, queue);
  }
  return queue;
}
