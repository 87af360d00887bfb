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
import { expect } from 'vitest';
import type { OncelyClient } from '../../src/client-api.js';
import type { OperationRecord } from '../../src/model.js';
import { sampleRecord } from '../../src/store.js';
import type { FakeRuntime } from '../../src/testing.js';

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

/**
 * Sends one POST (`key`), which the test's server answers 201, and returns
 * how many loads of the mocked module had been tried each time an attempt
 * went out: a module kept off the first send shows the count from before.
 *
 * @example
 * expect(await loadsAtFirstSend(h.client, h.rt, load, 'ok-1')).toEqual([0]);
 */
export async function loadsAtFirstSend(
  client: Pick<OncelyClient, 'on' | 'send'>,
  rt: Pick<FakeRuntime, 'run'>,
  load: Pick<LoadCounter, 'attempts'>,
  key: string,
): Promise<number[]> {
  const loads: number[] = [];
  const off = client.on('attempt:sending', () => void loads.push(load.attempts));
  try {
    const sent = await rt.run(client.send({ method: 'POST', url: '/payments', key, json: {} }));
    expect(sent).toMatchObject({ key, status: 201 });
  } finally {
    off();
  }
  return loads;
}

/**
 * An operation an earlier page stored, its one attempt answered 503, due
 * now: its retry needs what follows a failure (the next step, the full gate).
 */
export function retryAfter503(key: string, url: string, nowMs: number): OperationRecord {
  return sampleRecord(key, {
    request: {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: { encoding: 'json', text: '{}' },
    },
    createdAt: nowMs,
    deadlineAt: nowMs + 60_000,
    nextAttemptAt: nowMs,
    attempts: [
      {
        n: 1,
        owner: 'earlier',
        startedAt: nowMs - 10,
        endedAt: nowMs - 5,
        class: 'retryable',
        status: 503,
        sent: 'definitely',
        effect: 'none',
      },
    ],
    backoff: { retries: 1, lastDelayMs: 0 },
  });
}
