/**
 * A fleet may mix runtimes on one table (Node servers, workers, Deno): the
 * fingerprint must not depend on which hash implementation ran. Node's
 * `node:crypto` (through `process.getBuiltinModule`) and WebCrypto give the
 * same hex for the same request.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
  vi.resetModules();
});

const body = new TextEncoder().encode('{"b":2,"a":[1,"x"]}');

describe('fingerprintOf', () => {
  it('node:crypto and WebCrypto agree', async () => {
    const withNode = await import('../../src/server/fingerprint.js');
    const viaNode = await withNode.fingerprintOf('POST', '/payments?x=1', body, 'application/json');
    vi.resetModules();
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
    const digest = vi.spyOn(crypto.subtle, 'digest');
    const withoutNode = await import('../../src/server/fingerprint.js');
    const viaWebCrypto = await withoutNode.fingerprintOf('POST', '/payments?x=1', body, 'application/json');
    expect(digest).toHaveBeenCalledTimes(1);
    expect(viaWebCrypto).toBe(viaNode);
    expect(viaNode).toMatch(/^[0-9a-f]{64}$/);
  });

  it('JSON by meaning, other bodies by bytes; method and target count', async () => {
    const { fingerprintOf } = await import('../../src/server/fingerprint.js');
    const reordered = new TextEncoder().encode('{ "a": [1, "x"],\n"b": 2 }');
    const json = 'application/problem+json; charset=utf-8';
    expect(await fingerprintOf('POST', '/p', reordered, json)).toBe(await fingerprintOf('POST', '/p', body, json));
    expect(await fingerprintOf('POST', '/p', reordered, 'text/plain')).not.toBe(
      await fingerprintOf('POST', '/p', body, 'text/plain'),
    );
    expect(await fingerprintOf('PUT', '/p', body, json)).not.toBe(await fingerprintOf('POST', '/p', body, json));
    expect(await fingerprintOf('POST', '/p?x=1', body, json)).not.toBe(await fingerprintOf('POST', '/p', body, json));
  });
});

describe('canonicalJson', () => {
  it("is canonicalize's RFC 8785 output for what JSON.parse returns", async () => {
    const { canonicalJson } = await import('../../src/server/fingerprint.js');
    const { default: canonicalize } = await import('canonicalize');
    const texts = [
      '{"b":2,"a":[1,"x",{"d":null,"c":true}],"é":"ü","\\u20ac":1e21,"€a":-0.000001}',
      '[1.0, 1e-7, 123456789012345680000, -0, 0.1, 1E2, "\\u0000\\n\\"", {}]',
      '{"":{"__proto__":{"a":1}},"A":"a","a":"A","10":1,"9":2,"\\ud83d\\ude00":"\\ud83d\\ude00"}',
      '"plain"',
      'null',
      '{"nested":{"z":[[],[{}],{"y":{"x":[3,2,1]}}]}}',
      // Keys in order already (one native serialisation), at every depth, and almost so.
      '{"amount":4800,"currency":"EUR","customer":{"id":"cus_42","tags":["a",{"x":-0,"y":"\\u00e9\\n"}]}}',
      '{"amount":4800,"currency":"EUR","customer":{"id":"cus_42","tags":["a",{"y":1e21,"x":0.1}]}}',
      '{"1":1,"2":{"A":1,"a":2}}',
      '{"1":1,"10":2,"2":3}',
      '{"a":1,"a\\u0000":2,"b":3}',
    ];
    for (const text of texts) {
      const value = JSON.parse(text) as unknown;
      expect(canonicalJson(value)).toBe(canonicalize(value));
    }
  });

  it('a lone surrogate does not fail the request: it is fingerprinted, and kept apart from another', async () => {
    const { fingerprintOf } = await import('../../src/server/fingerprint.js');
    const lone = new TextEncoder().encode('{"name":"\\ud800"}');
    const other = new TextEncoder().encode('{"name":"\\ud801"}');
    const a = await fingerprintOf('POST', '/p', lone, 'application/json');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await fingerprintOf('POST', '/p', other, 'application/json')).not.toBe(a);
    // Keys in order (serialised at once) and not (sorted key by key): one fingerprint.
    const inOrder = new TextEncoder().encode('{"a":"\\ud800","b":[1]}');
    const reordered = new TextEncoder().encode('{"b":[1],"a":"\\ud800"}');
    expect(await fingerprintOf('POST', '/p', inOrder, 'application/json')).toBe(
      await fingerprintOf('POST', '/p', reordered, 'application/json'),
    );
  });
});
