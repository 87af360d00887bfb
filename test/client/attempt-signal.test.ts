/**
 * An attempt's abort signal is aborted once the attempt is over (see
 * src/flow/drive/attempt.ts): Node's own fetch keeps each request's signal,
 * with its abort listener, in a finalization registry until that signal
 * aborts or a full GC ran, which under a long stream of attempts (resume at
 * scale) kept every attempt since the last full GC alive. Here over Node's
 * fetch and a real socket: the listener is gone after the attempt, the
 * answer stands, and the abort of a finished exchange does not cut the
 * kept-alive connection.
 */
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTEMPT_OVER, performAttempt } from '../../src/flow/drive/attempt.js';
import { defaultTransport } from '../../src/flow/transport/transport.js';
import { systemRuntime } from '../../src/runtime.js';

let server: Server | undefined;

afterEach(async () => {
  const open = server;
  server = undefined;
  if (open !== undefined) {
    open.closeAllConnections();
    await new Promise<void>((resolve) => open.close(() => resolve()));
  }
});

/** A server answering 201 with a small JSON body; counts the connections it accepted. */
async function answering(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const started = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"id":"pay_1"}');
    });
  });
  started.on('connection', () => connections++);
  server = started;
  await new Promise<void>((resolve) => started.listen(0, '127.0.0.1', resolve));
  const { port } = started.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/payments`, connections: () => connections };
}

/** Node's own fetch, noting the signal of each call. */
function watchedFetch(signals: AbortSignal[]): () => typeof globalThis.fetch {
  const fetch: typeof globalThis.fetch = (input, init) => {
    signals.push(init?.signal as AbortSignal);
    return globalThis.fetch(input, init);
  };
  return () => fetch;
}

const attempt = (url: string) => ({
  request: {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: { encoding: 'json' as const, text: '{"amount":4800}' },
  },
  extraHeaders: { 'idempotency-key': 'k1' },
  timeoutMs: 5_000,
  signal: undefined,
});

describe("an attempt over Node's fetch lets its signal go once over", () => {
  it('no abort listener is left on the signal, and the answer and its body stand', async () => {
    const { url } = await answering();
    const signals: AbortSignal[] = [];
    const output = await performAttempt(defaultTransport(watchedFetch(signals)), systemRuntime, attempt(url));
    expect(output.observation).toMatchObject({ kind: 'response', status: 201 });
    expect(new TextDecoder().decode(output.bytes)).toBe('{"id":"pay_1"}');
    expect(signals).toHaveLength(1);
    const signal = signals[0] as AbortSignal;
    expect(signal.reason).toBe(ATTEMPT_OVER);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('the abort of a finished exchange keeps its connection: the next attempt reuses it', async () => {
    const { url, connections } = await answering();
    const signals: AbortSignal[] = [];
    const transport = defaultTransport(watchedFetch(signals));
    for (let i = 0; i < 3; i++) {
      const output = await performAttempt(transport, systemRuntime, attempt(url));
      expect(output.observation).toMatchObject({ kind: 'response', status: 201 });
      // undici hands the socket back to its pool a turn after the body ended: one turn between
      // attempts (without it, a second connection opens, abort or not).
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(signals.map((signal) => signal.reason)).toEqual([ATTEMPT_OVER, ATTEMPT_OVER, ATTEMPT_OVER]);
    expect(connections()).toBe(1);
  });
});
