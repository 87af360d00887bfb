/**
 * Once next-step.ts is loaded (flow/drive/next-step-load.ts), an answer
 * that needs it is handled exactly as promptly as a plain 2xx: no turn of
 * the event loop is added for it. Otherwise answers that arrive together are
 * handled out of order (every 503 a few turns behind every 201), and the
 * host's gate, whose state depends on the order of what it hears (a failure
 * while half-open re-opens it, a success while open starts a ramp), and the
 * retry delays drawn from the seeded random sequence turn out differently
 * than before the split: same requests, same answers, another timing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../../src/client.js';
import { HostGate } from '../../../src/policy/gate.js';
import { memoryStore } from '../../../src/store/memory.js';
import { createFakeRuntime } from '../../../src/testing/fake-runtime.js';

const URL_ = 'https://api.example.test/payments';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the next step, once loaded', () => {
  it('handles answers that arrive together in the order they arrived: the gate hears them so', async () => {
    const rt = createFakeRuntime({ seed: 1 });
    const answered: string[] = [];
    const sent = new Map<string, number>();
    // Same body and headers for every answer: only the status differs (503 for the first try of a key starting "fail").
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const key = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get(
        'idempotency-key',
      ) as string;
      const n = (sent.get(key) ?? 0) + 1;
      sent.set(key, n);
      const status = key.startsWith('fail') && n === 1 ? 503 : 201;
      answered.push(`${status} ${key}`);
      return new Response('{}', { status, headers: { 'content-type': 'application/json' } });
    }) as typeof globalThis.fetch;
    // The platform's connectivity: offline, then back, waking every waiting operation at once.
    let online = true;
    const wakes = new Set<() => void>();
    let subscribed: () => void = () => undefined;
    const connectivity = {
      online: () => online,
      onOnline: (fn: () => void) => {
        wakes.add(fn);
        subscribed();
        return () => void wakes.delete(fn);
      },
    };
    const client = createClient({ runtime: rt, fetch, connectivity, store: memoryStore({ now: rt.now }) });
    // A first 503 loads the next step (and the host's full gate): from here it is loaded.
    await rt.run(client.send({ method: 'POST', url: URL_, key: 'fail-warm', json: {} }));

    const heard: string[] = [];
    const failure = HostGate.prototype.reportFailure;
    const success = HostGate.prototype.reportSuccess;
    vi.spyOn(HostGate.prototype, 'reportFailure').mockImplementation(function (this: HostGate, ...args) {
      heard.push(`503 ${args[4]}`);
      return failure.apply(this, args);
    });
    vi.spyOn(HostGate.prototype, 'reportSuccess').mockImplementation(function (this: HostGate, ...args) {
      heard.push(`201 ${args[2]}`);
      return success.apply(this, args);
    });
    answered.length = 0;
    const ended: string[] = [];
    client.on('attempt:ended', (e) => void ended.push(`${e.attempt} ${e.key}`));
    online = false;
    // Each operation written ahead and waiting for the network, one after another (so they are woken in this
    // order); then it is back, for all of them at once.
    const sends: Promise<unknown>[] = [];
    for (const key of ['fail-1', 'ok-1', 'fail-2', 'ok-2']) {
      const waiting = new Promise<void>((resolve) => {
        subscribed = resolve;
      });
      sends.push(client.send({ method: 'POST', url: URL_, key, json: {} }));
      await waiting;
    }
    online = true;
    for (const wake of [...wakes]) wake();
    await rt.run(Promise.all(sends));
    // The four first answers, in the order they came; the gate hears each as it came, and each ends so.
    const first = answered.slice(0, 4);
    expect(first).toEqual(['503 fail-1', '201 ok-1', '503 fail-2', '201 ok-2']);
    expect(heard.slice(0, 4)).toEqual(first);
    expect(ended.slice(0, 4)).toEqual(['1 fail-1', '1 ok-1', '1 fail-2', '1 ok-2']);
    await client.close();
  });
});
