/**
 * With Node's own `fetch`, attempts ask for `redirect: 'error'` (see
 * flow/transport/transport.ts), and a refused redirect must be read as the answer it
 * is, whatever realm or stand-in produced the rejection: read as a failure
 * in flight, it would be retried. And only Node's own `fetch` is asked:
 * runtimes that call themselves Node refuse redirects in shapes of their own.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { isRefusedRedirect, nodesOwnFetch } from '../../../src/flow/transport/transport.js';

describe('isRefusedRedirect', () => {
  it("reads undici's rejection (TypeError 'fetch failed' caused by 'unexpected redirect')", () => {
    expect(isRefusedRedirect(new TypeError('fetch failed', { cause: new Error('unexpected redirect') }))).toBe(true);
  });

  it('reads it from another realm (a vm context, as Jest runs tests), where instanceof fails', () => {
    const foreign = runInNewContext(`new TypeError('fetch failed', { cause: new Error('unexpected redirect') })`);
    expect(foreign instanceof TypeError).toBe(false);
    expect(isRefusedRedirect(foreign)).toBe(true);
  });

  it("reads the stand-ins' shapes: a string cause (@mswjs/interceptors), node-fetch's no-redirect", () => {
    expect(isRefusedRedirect(new TypeError('Failed to fetch', { cause: 'unexpected redirect' }))).toBe(true);
    expect(isRefusedRedirect(Object.assign(new Error('redirect mode is set to error'), { type: 'no-redirect' }))).toBe(
      true,
    );
  });

  it('is false for failures in flight and for anything else', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(isRefusedRedirect(new TypeError('fetch failed', { cause: reset }))).toBe(false);
    expect(isRefusedRedirect(new TypeError('fetch failed'))).toBe(false);
    expect(isRefusedRedirect(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isRefusedRedirect('unexpected redirect')).toBe(false);
    expect(isRefusedRedirect(null)).toBe(false);
    expect(isRefusedRedirect(undefined)).toBe(false);
  });
});

describe('nodesOwnFetch', () => {
  const fetch = (() => Promise.reject(new Error('not called'))) as unknown as typeof globalThis.fetch;
  const node = { release: { name: 'node' }, versions: { node: '22.0.0' } };

  it('is the scope’s fetch in Node', () => {
    expect(nodesOwnFetch({ process: node, fetch })).toBe(fetch);
    expect(nodesOwnFetch(globalThis)).toBe(globalThis.fetch);
  });

  it('is undefined where something else answers to the name of Node', () => {
    expect(nodesOwnFetch({ process: { ...node, versions: { node: '22', bun: '1.2.0' } }, fetch })).toBeUndefined();
    expect(nodesOwnFetch({ process: { ...node, versions: { node: '22', deno: '2.1.0' } }, fetch })).toBeUndefined();
    expect(nodesOwnFetch({ process: node, Deno: {}, fetch })).toBeUndefined();
    // A simulated DOM (happy-dom, jsdom) or an Electron renderer.
    expect(nodesOwnFetch({ process: node, document: {}, fetch })).toBeUndefined();
    // An Electron worker with Node integration: its fetch is Chromium's.
    expect(nodesOwnFetch({ process: node, WorkerGlobalScope: class {}, fetch })).toBeUndefined();
  });

  it('is undefined in a browser and without a fetch', () => {
    expect(nodesOwnFetch({ fetch, document: {} })).toBeUndefined();
    expect(nodesOwnFetch({ fetch })).toBeUndefined();
    expect(nodesOwnFetch({ process: node })).toBeUndefined();
  });
});
