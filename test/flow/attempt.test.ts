/**
 * The transport path of one attempt: ky resolves the request, but the body
 * and the abort signal go straight to `fetch(url, init)` (see flow/attempt.ts
 * and BENCHMARKS.md). If a ky upgrade stopped forwarding the side option to
 * its `fetch`, requests would leave without their body: these tests say so.
 */
import ky from 'ky';
import { describe, expect, it } from 'vitest';
import { directFetch, performAttempt } from '../../src/flow/attempt.js';
import { systemRuntime } from '../../src/runtime.js';

interface Seen {
  input: unknown;
  init: RequestInit | undefined;
}

function recordingKy(answer: () => Response) {
  const seen: Seen[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    seen.push({ input, init });
    return answer();
  };
  const http = ky.create({ retry: 0, timeout: false, throwHttpErrors: false, fetch: directFetch(() => fetch) });
  return { http, seen };
}

describe('performAttempt transport', () => {
  it('sends fetch(url, init) with the stored bytes, the headers and a signal', async () => {
    const { http, seen } = recordingKy(
      () => new Response('{"ok":true}', { status: 201, headers: { 'content-type': 'application/json' } }),
    );
    const output = await performAttempt(http, systemRuntime, {
      request: {
        method: 'POST',
        url: 'https://api.example.com/payments?x=1',
        headers: { 'content-type': 'application/json' },
        body: { encoding: 'json', text: '{"amount":4800}' },
      },
      extraHeaders: { 'idempotency-key': 'k1' },
      timeoutMs: 5_000,
      signal: undefined,
    });
    expect(output.observation).toMatchObject({ kind: 'response', status: 201 });
    expect(seen).toHaveLength(1);
    const [call] = seen;
    expect(call?.input).toBe('https://api.example.com/payments?x=1');
    expect(call?.init?.method).toBe('POST');
    expect(call?.init?.body).toBe('{"amount":4800}');
    expect(call?.init?.signal).toBeInstanceOf(AbortSignal);
    const headers = new Headers(call?.init?.headers);
    expect(headers.get('idempotency-key')).toBe('k1');
    expect(headers.get('content-type')).toBe('application/json');
    expect(call?.init).not.toHaveProperty('oncelyDirect');
  });

  it('sends bytes bodies as bytes, and no body for a GET', async () => {
    const { http, seen } = recordingKy(() => new Response(null, { status: 204 }));
    await performAttempt(http, systemRuntime, {
      request: {
        method: 'PUT',
        url: 'https://api.example.com/blob',
        headers: {},
        body: { encoding: 'base64', data: 'AAEC' },
      },
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: undefined,
    });
    await performAttempt(http, systemRuntime, {
      request: { method: 'GET', url: 'https://api.example.com/blob', headers: {} },
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: undefined,
    });
    expect(Array.from(seen[0]?.init?.body as Uint8Array)).toEqual([0, 1, 2]);
    expect(seen[1]?.init?.body ?? null).toBeNull();
  });

  it('a caller abort reaches the fetch', async () => {
    const caller = new AbortController();
    const fetch: typeof globalThis.fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
        caller.abort(new Error('stop'));
      });
    const http = ky.create({ retry: 0, timeout: false, throwHttpErrors: false, fetch: directFetch(() => fetch) });
    const output = await performAttempt(http, systemRuntime, {
      request: {
        method: 'POST',
        url: 'https://api.example.com/x',
        headers: {},
        body: { encoding: 'text', text: 'hi' },
      },
      extraHeaders: {},
      timeoutMs: 5_000,
      signal: caller.signal,
    });
    expect(output.observation).toMatchObject({ kind: 'aborted', sent: 'maybe' });
  });
});
