/**
 * A module the client loads with `import()`, made to fail its next loads as
 * a chunk a page could not fetch would. Each test file keeps its own counter
 * (`vi.hoisted`) and mocks the module with `failingLoad`:
 *
 * @example
 * const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));
 * vi.mock('../../src/flow/calls/remedies.js', async (original) =>
 *   (await import('../helpers/load-failure.js')).failingLoad(load, 'remedies.js', original),
 * );
 */

/** How many loads are still to fail, and how many were tried. */
export interface LoadCounter {
  failuresLeft: number;
  attempts: number;
}

/** Counts one load of `file`; fails it while `failuresLeft` lasts, else loads the real module. */
export async function failingLoad<T>(load: LoadCounter, file: string, importOriginal: () => Promise<T>): Promise<T> {
  load.attempts++;
  if (load.failuresLeft > 0) {
    load.failuresLeft--;
    throw new TypeError(`Failed to fetch dynamically imported module: ${file}`);
  }
  return importOriginal();
}

/** The test runner wraps a failing module factory in its own error: the load's error is that one's cause. */
export const loadError = (error: unknown): unknown => (error as Error | undefined)?.cause;

/** What a call settled with: its rejection, or undefined when it resolved. */
export const rejection = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => undefined,
    (e: unknown) => e,
  );
