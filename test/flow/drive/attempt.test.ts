/**
 * The transport path of one attempt: the request is built (and refused
 * there, before anything left, when it cannot be), then its URL, method and
 * headers go to `fetch(url, init)` with the body and the abort signal (see
 * flow/transport/transport.ts and BENCHMARKS.md).
 */
import { describe, expect, it, vi } from 'vitest';
import { ATTEMPT_OVER, performAttempt } from '../../../src/flow/drive/attempt.js';
import type { Connectivity } from '../../../src/flow/engine/engine.js';
import {
  defaultTransport,
  type Transport,
  type TransportContext,
  type TransportRequest,
  type TransportResult,
} from '../../../src/flow/transport/transport.js';
import { systemRuntime } from '../../../src/runtime.js';
import { createFakeRuntime } from '../../../src/testing/fake-runtime.js';

interface Seen {
  input: unknown;
  init: RequestInit | undefined;
}

function recordingFetch(answer: () => Response) {
  const seen: Seen[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    seen.push({ input, init });
    return answer();
  };
  const http = defaultTransport(() => fetch);
  return { http, seen };
}

describe('performAttempt transport', () => {
  it('sends fetch(url, init) with the stored bytes, the headers and a signal', async () => {
    const { http, seen } = recordingFetch(
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
    const { http, seen } = recordingFetch(() => new Response(null, { status: 204 }));
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
    const http = defaultTransport(() => fetch);
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

const post = (extra: Partial<Parameters<typeof performAttempt>[2]> = {}): Parameters<typeof performAttempt>[2] => ({
  request: { method: 'POST', url: 'https://api.example.com/p', headers: {}, body: { encoding: 'text', text: 'hi' } },
  extraHeaders: {},
  timeoutMs: 5_000,
  signal: undefined,
  ...extra,
});

/** A real Response whose platform-set fields are replaced, as a browser or another fetch would set them. */
function shaped(fields: Partial<Record<'type' | 'status' | 'redirected' | 'url', unknown>>, status = 200): Response {
  const response = new Response(null, { status });
  for (const [name, value] of Object.entries(fields)) Object.defineProperty(response, name, { value });
  return response;
}

describe('performAttempt: redirects are never followed', () => {
  it("every attempt asks fetch for redirect: manual (a fetch that is not Node's own)", async () => {
    const { http, seen } = recordingFetch(() => new Response(null, { status: 204 }));
    await performAttempt(http, systemRuntime, post());
    expect(seen[0]?.init?.redirect).toBe('manual');
  });

  it('a 3xx is a redirect observation with its Location, read once', async () => {
    const { http, seen } = recordingFetch(
      () => new Response('moved', { status: 307, headers: { location: 'https://evil.test/take' } }),
    );
    const output = await performAttempt(http, systemRuntime, post());
    expect(output.observation).toEqual({ kind: 'redirect', status: 307, location: 'https://evil.test/take' });
    expect(output.bytes).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it("a browser's opaqueredirect (status 0) and a fetch that followed anyway", async () => {
    const opaque = recordingFetch(() => shaped({ type: 'opaqueredirect', status: 0 }));
    expect((await performAttempt(opaque.http, systemRuntime, post())).observation).toEqual({
      kind: 'redirect',
      status: undefined,
      location: undefined,
    });
    const followed = recordingFetch(() => shaped({ redirected: true, url: 'https://b.test/landed' }, 201));
    expect((await performAttempt(followed.http, systemRuntime, post())).observation).toMatchObject({
      kind: 'redirect',
      location: 'https://b.test/landed',
      followed: true,
    });
  });
});

describe('performAttempt: the signal after an answer', () => {
  /** A transport that answers `observation` and keeps the signal it was given. */
  function answering(observation: TransportResult['observation']) {
    const signals: AbortSignal[] = [];
    const http: Transport = async (_request, context) => {
      signals.push(context.signal);
      return { observation, headers: {}, bytes: undefined };
    };
    return { http, signals };
  }

  it('is aborted once the answer was a redirect (nobody reads its body; the connection is let go)', async () => {
    const { http, signals } = answering({ kind: 'redirect', status: undefined, location: undefined });
    await performAttempt(http, systemRuntime, post());
    expect(signals[0]?.aborted).toBe(true);
  });

  it('is aborted once any other answer is in, after the transport resolved, and the answer stands', async () => {
    const { http, signals } = answering({ kind: 'response', status: 201, header: () => null, text: '' });
    const output = await performAttempt(http, systemRuntime, post());
    expect(output.observation).toMatchObject({ kind: 'response', status: 201 });
    expect(signals[0]?.aborted).toBe(true);
    // Not a timeout's nor a caller's reason: the attempt was simply over.
    expect(signals[0]?.reason).toBe(ATTEMPT_OVER);
  });

  it('is aborted once a failed exchange is judged, and the judgement stands', async () => {
    const signals: AbortSignal[] = [];
    const resetting: Transport = async (_request, context) => {
      signals.push(context.signal);
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' }),
      });
    };
    const output = await performAttempt(resetting, systemRuntime, post());
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'maybe', code: 'ECONNRESET' });
    expect(signals[0]?.reason).toBe(ATTEMPT_OVER);
  });

  it('a caller abort whose reason looks like a refused redirect is still an abort (may have been sent)', async () => {
    const caller = new AbortController();
    // As fetch does: rejects with the signal's reason, at once if it aborted already.
    const hanging = defaultTransport(
      () => (_input, init) =>
        new Promise<Response>((_resolve, reject) => {
          const signal = init?.signal as AbortSignal;
          if (signal.aborted) reject(signal.reason);
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    );
    const pending = performAttempt(hanging, systemRuntime, post({ signal: caller.signal }));
    caller.abort(new TypeError('fetch failed', { cause: new Error('unexpected redirect') }));
    expect((await pending).observation).toEqual({ kind: 'aborted', sent: 'maybe' });
  });
});

describe('performAttempt: a request that cannot be built was never sent', () => {
  it('a header value with CR/LF (from the headers callback) is not_sent; fetch is not called', async () => {
    const { http, seen } = recordingFetch(() => new Response(null));
    const output = await performAttempt(http, systemRuntime, post({ extraHeaders: { authorization: 'a\r\nb: c' } }));
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'INVALID_REQUEST' });
    expect(seen).toHaveLength(0);
    const named = await performAttempt(http, systemRuntime, post({ extraHeaders: { 'a b': 'c' } }));
    expect(named.observation).toMatchObject({ sent: 'not' });
  });

  it('a URL the request cannot be built with is not_sent; fetch is not called', async () => {
    const { http, seen } = recordingFetch(() => new Response(null));
    const output = await performAttempt(
      http,
      systemRuntime,
      post({ request: { method: 'POST', url: 'https://[bad/payments', headers: {}, body: undefined } }),
    );
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'INVALID_REQUEST' });
    expect(seen).toHaveLength(0);
  });
});

describe('performAttempt: bodies are read up to maxResponseBytes', () => {
  function endless(status: number) {
    let pulls = 0;
    const chunk = new Uint8Array(1_000).fill(120);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(chunk.slice());
      },
    });
    const { http } = recordingFetch(() => new Response(stream, { status }));
    return { http, pulls: () => pulls };
  }

  it('an endless 2xx body: reading stops past the cap, nothing is kept for storage', async () => {
    const source = endless(200);
    const output = await performAttempt(source.http, systemRuntime, post({ maxResponseBytes: 10_000 }));
    expect(output.observation).toMatchObject({ kind: 'response', status: 200, bodyTruncatedAtBytes: 10_000 });
    expect(output.bytes).toBeUndefined();
    expect(source.pulls()).toBeLessThanOrEqual(13);
  });

  it('an error body over the cap keeps its first bytes for body rules', async () => {
    const source = endless(500);
    const output = await performAttempt(source.http, systemRuntime, post({ maxResponseBytes: 2_500 }));
    expect(output.bytes).toHaveLength(2_500);
    expect(output.observation.kind === 'response' && output.observation.text).toBe('x'.repeat(2_500));
  });

  it('a body exactly at the cap is whole', async () => {
    const { http } = recordingFetch(() => new Response(new Uint8Array(4_096).fill(65), { status: 201 }));
    const output = await performAttempt(http, systemRuntime, post({ maxResponseBytes: 4_096 }));
    expect(output.bytes).toHaveLength(4_096);
    expect(output.observation).not.toHaveProperty('bodyTruncatedAtBytes');
  });
});

/** An answer as a transport that never touches the network would give it. */
const answer = (status: number, body = ''): TransportResult => ({
  observation: { kind: 'response', status, header: () => null, text: body },
  headers: { 'x-seen': 'yes' },
  bytes: new TextEncoder().encode(body),
});

describe('performAttempt over a custom Transport (no network)', () => {
  it('a plain function receives the merged request and a live signal, and its answer is the output', async () => {
    const calls: Array<{ request: TransportRequest; context: TransportContext }> = [];
    const transport: Transport = async (request, context) => {
      calls.push({ request, context });
      expect(context.signal.aborted).toBe(false);
      return answer(201, '{"id":1}');
    };
    const output = await performAttempt(
      transport,
      systemRuntime,
      post({ extraHeaders: { 'idempotency-key': 'k9' }, maxResponseBytes: 64 }),
    );
    expect(output.observation).toMatchObject({ kind: 'response', status: 201 });
    expect(output.headers).toEqual({ 'x-seen': 'yes' });
    expect(new TextDecoder().decode(output.bytes)).toBe('{"id":1}');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.request).toEqual({
      method: 'POST',
      url: 'https://api.example.com/p',
      headers: { 'idempotency-key': 'k9' },
      body: { encoding: 'text', text: 'hi' },
    });
    expect(calls[0]?.context).toMatchObject({ timeoutMs: 5_000, maxResponseBytes: 64 });
  });

  it('a transport that never answers is cut off by the attempt timeout, on the injected clock', async () => {
    const rt = createFakeRuntime();
    let sawAbort = false;
    const hanging: Transport = (_request, context) =>
      new Promise((_resolve, reject) => {
        context.signal.addEventListener('abort', () => {
          sawAbort = true;
          reject(context.signal.reason);
        });
      });
    const started = rt.monotonicNow();
    const output = await rt.run(performAttempt(hanging, rt, post({ timeoutMs: 2_000 })));
    expect(output.observation).toEqual({ kind: 'timeout', afterMs: 2_000 });
    expect(sawAbort).toBe(true);
    expect(rt.monotonicNow() - started).toBe(2_000);
  });

  it('a rejection is judged by its code: a refused connection was not sent, a reset may have been', async () => {
    const failing =
      (code: string): Transport =>
      async () => {
        throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
      };
    const refused = await performAttempt(failing('ECONNREFUSED'), systemRuntime, post());
    expect(refused.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'ECONNREFUSED' });
    const reset = await performAttempt(failing('ECONNRESET'), systemRuntime, post());
    expect(reset.observation).toMatchObject({ kind: 'transport_error', sent: 'maybe', code: 'ECONNRESET' });
  });

  it('a 2xx body the transport cut at the limit is not kept; an error body is', async () => {
    const cut =
      (status: number): Transport =>
      async () => {
        const result = answer(status, 'abc');
        if (result.observation.kind === 'response') result.observation.bodyTruncatedAtBytes = 3;
        return result;
      };
    expect((await performAttempt(cut(200), systemRuntime, post())).bytes).toBeUndefined();
    expect((await performAttempt(cut(503), systemRuntime, post())).bytes).toHaveLength(3);
  });
});

describe('performAttempt: offline comes only from the injected Connectivity', () => {
  const connectivity = (online: boolean): Connectivity => ({ online: () => online, onOnline: () => () => undefined });

  it('offline before sending: the transport is never called, and nothing was sent', async () => {
    let calls = 0;
    const transport: Transport = async () => {
      calls++;
      throw new Error('unreachable');
    };
    const output = await performAttempt(transport, systemRuntime, post({ connectivity: connectivity(false) }));
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'not', code: 'OFFLINE' });
    expect(calls).toBe(0);
  });

  it('offline by the time a request failed proves nothing: it may have been sent', async () => {
    let online = true;
    const flaky: Connectivity = { online: () => online, onOnline: () => () => undefined };
    let calls = 0;
    const dropping: Transport = async () => {
      calls++;
      online = false; // the link went down mid-request: the server may already have it
      throw new TypeError('fetch failed');
    };
    const output = await performAttempt(dropping, systemRuntime, post({ connectivity: flaky }));
    expect(calls).toBe(1);
    expect(output.observation).toMatchObject({ kind: 'transport_error', sent: 'maybe' });
  });

  it('navigator.onLine is not read by the attempt', async () => {
    vi.stubGlobal('navigator', { onLine: false });
    const output = await performAttempt(async () => answer(200), systemRuntime, post());
    expect(output.observation).toMatchObject({ kind: 'response', status: 200 });
  });
});
