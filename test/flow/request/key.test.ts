import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../src/errors.js';
import { assertValidKey, deriveKey, fingerprintOf, fingerprintText } from '../../../src/flow/request/key.js';
import type { StoredBody } from '../../../src/model.js';
import { nodeSha256Hex } from '../../../src/node/sha256.js';
import { createClient as createNodeClient } from '../../../src/node.js';
import { systemRuntime } from '../../../src/runtime.js';

const identity = { namespace: 'checkout.pay', version: 1, fields: { tenant: 't_1', cart: 'c_9', orderVersion: 3 } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{12}$/;

describe('deriveKey', () => {
  it('is stable and ignores field order', async () => {
    const a = await deriveKey(identity);
    const b = await deriveKey({ ...identity, fields: { orderVersion: 3, cart: 'c_9', tenant: 't_1' } });
    expect(a).toBe(b);
  });

  it('without a secret: a name-based UUIDv5', async () => {
    const key = await deriveKey(identity);
    expect(UUID.exec(key)?.[1]).toBe('5');
  });

  it('with a secret: an HMAC-SHA-256 UUIDv8 that depends on the secret', async () => {
    const a = await deriveKey(identity, { secret: 'one' });
    const b = await deriveKey(identity, { secret: 'two' });
    const match = UUID.exec(a);
    expect(match?.[1]).toBe('8');
    expect(['8', '9', 'a', 'b']).toContain(match?.[2]);
    expect(a).not.toBe(b);
    expect(await deriveKey(identity, { secret: new TextEncoder().encode('one') })).toBe(a);
  });

  it('changes with any field, the namespace or the recipe version', async () => {
    const base = await deriveKey(identity);
    expect(await deriveKey({ ...identity, fields: { ...identity.fields, orderVersion: 4 } })).not.toBe(base);
    expect(await deriveKey({ ...identity, namespace: 'checkout.refund' })).not.toBe(base);
    expect(await deriveKey({ ...identity, version: 2 })).not.toBe(base);
    // A number and its string are different identities.
    expect(await deriveKey({ ...identity, fields: { ...identity.fields, orderVersion: '3' } })).not.toBe(base);
  });

  it('refuses non-scalar fields and bad versions', async () => {
    await expect(deriveKey({ ...identity, fields: { nested: {} as unknown as string } })).rejects.toThrow(
      /fields.nested/,
    );
    await expect(deriveKey({ ...identity, version: 1.5 })).rejects.toThrow(InvalidRequestError);
    await expect(deriveKey(identity, { secret: '' })).rejects.toThrow(/secret/);
  });
});

describe('fingerprint', () => {
  const url = 'https://api.example.test/payments';
  it('reordered JSON keys and whitespace give the same fingerprint', async () => {
    const a = await fingerprintOf('POST', url, {
      encoding: 'json',
      text: '{"orderId":"ord_4819","amount":4800,"currency":"EUR"}',
    });
    const b = await fingerprintOf('post', url, {
      encoding: 'json',
      text: '{ "currency": "EUR", "amount": 4800, "orderId": "ord_4819" }',
    });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a changed amount, method, URL or query changes it', async () => {
    const body = { encoding: 'json' as const, text: '{"amount":4800}' };
    const base = await fingerprintOf('POST', url, body);
    expect(await fingerprintOf('POST', url, { encoding: 'json', text: '{"amount":5800}' })).not.toBe(base);
    expect(await fingerprintOf('PUT', url, body)).not.toBe(base);
    expect(await fingerprintOf('POST', `${url}?x=1`, body)).not.toBe(base);
  });

  it('text bodies compare byte for byte', async () => {
    expect(await fingerprintOf('POST', url, { encoding: 'text', text: 'a=1&b=2' })).not.toBe(
      await fingerprintOf('POST', url, { encoding: 'text', text: 'b=2&a=1' }),
    );
  });
});

describe('key validation', () => {
  it('accepts safe keys and refuses others', () => {
    expect(() => assertValidKey('order_4819:charge-1.v2', 255)).not.toThrow();
    expect(() => assertValidKey('has space', 255)).toThrow(InvalidRequestError);
    expect(() => assertValidKey('new\nline', 255)).toThrow(InvalidRequestError);
    expect(() => assertValidKey('x'.repeat(256), 255)).toThrow(/1..255/);
    expect(() => assertValidKey('', 255)).toThrow(InvalidRequestError);
  });
});

describe('fingerprintOf: the hash is injected', () => {
  const body = { encoding: 'json', text: '{"amount":4800,"note":"café ☕"}' } as const;

  it("Node's SHA-256 (oncely/node) and WebCrypto's (universal) give the same fingerprint", async () => {
    const url = 'https://api.example.com/payments/é?q=ü';
    const universal = await fingerprintOf('POST', url, body);
    expect(await fingerprintOf('POST', url, body, nodeSha256Hex)).toBe(universal);
    expect(await fingerprintOf('POST', url, body, systemRuntime.sha256Hex)).toBe(universal);
    for (const text of ['', 'abc', 'ü'.repeat(1_000), '\u{1F600}']) {
      expect(await nodeSha256Hex(text)).toBe(await systemRuntime.sha256Hex(text));
    }
    // A known answer, so both cannot be wrong together: SHA-256("abc").
    expect(await nodeSha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('the given hash is the one used: its answer is the fingerprint', async () => {
    const seen: string[] = [];
    const fake = async (text: string): Promise<string> => {
      seen.push(text);
      return 'f'.repeat(64);
    };
    expect(await fingerprintOf('post', 'https://a.test/x', undefined, fake)).toBe('f'.repeat(64));
    expect(seen).toEqual(['{"body":null,"method":"POST","url":"https://a.test/x"}']);
  });

  it("a client's runtime hash fingerprints its operations (the node entry keeps one the app gives)", async () => {
    const hashed: string[] = [];
    const client = createNodeClient({
      baseUrl: 'https://api.example.com',
      fetch: async () => new Response(null, { status: 204 }),
      runtime: {
        sha256Hex: async (text) => {
          hashed.push(text);
          return 'e'.repeat(64);
        },
      },
    });
    const queued = await client.enqueue({ method: 'POST', url: '/x', key: 'k-hash', json: { a: 1 } });
    expect((await client.get(queued.key))?.fingerprint).toBe('e'.repeat(64));
    expect(hashed).toHaveLength(1);
    await client.close();
  });
});

describe('fingerprintText: the canonical JSON of { method, url, body }, built without canonicalising the wrapper', () => {
  const wholeObject = (method: string, url: string, body: StoredBody | undefined): string | undefined => {
    const inner =
      body === undefined
        ? null
        : body.encoding === 'json'
          ? { json: JSON.parse(body.text) as unknown }
          : body.encoding === 'text'
            ? { text: body.text }
            : { base64: body.data };
    return canonicalize({ method: method.toUpperCase(), url, body: inner });
  };
  const cases: [string, string, StoredBody | undefined][] = [
    ['post', 'https://a.test/x', undefined],
    [
      'POST',
      'https://api.example.com/payments/%C3%A9?q=%C3%BC',
      { encoding: 'json', text: '{"b":1,"a":[2,{"d":null,"c":"é"}]}' },
    ],
    ['PUT', 'https://a.test/"quoted"\\', { encoding: 'json', text: '  [1e3, -0, 0.1, "\\u2028", true]  ' }],
    ['PATCH', 'https://a.test/x', { encoding: 'json', text: '"just a string"' }],
    [
      'POST',
      'https://a.test/x',
      { encoding: 'json', text: '{"z":[],"__proto__":{"x":1},"é":{},"\\ud83d\\ude00":5e-7,"a":1.5e21,"A":-1e-7}' },
    ],
    ['POST', 'https://a.test/x', { encoding: 'text', text: 'a=1&b=2\n"☕"' }],
    ['POST', 'https://a.test/x', { encoding: 'base64', data: 'AAEC/w==' }],
  ];

  it('is byte for byte what canonicalize makes of the whole object', () => {
    for (const [method, url, body] of cases)
      expect(fingerprintText(method, url, body)).toBe(wholeObject(method, url, body));
  });

  it('keeps a known fingerprint (stored fingerprints must keep matching)', async () => {
    const body = { encoding: 'json', text: '{"currency":"EUR","amount":4800}' } as const;
    expect(fingerprintText('POST', 'https://api.example.com/payments', body)).toBe(
      '{"body":{"json":{"amount":4800,"currency":"EUR"}},"method":"POST","url":"https://api.example.com/payments"}',
    );
    expect(await fingerprintOf('POST', 'https://api.example.com/payments', body, nodeSha256Hex)).toBe(
      await nodeSha256Hex(
        '{"body":{"json":{"amount":4800,"currency":"EUR"}},"method":"POST","url":"https://api.example.com/payments"}',
      ),
    );
  });

  it('refuses what canonicalize refuses: a lone surrogate in a text body', () => {
    expect(() => fingerprintText('POST', 'https://a.test/x', { encoding: 'text', text: 'a\uD800b' })).toThrow();
    expect(() => wholeObject('POST', 'https://a.test/x', { encoding: 'text', text: 'a\uD800b' })).toThrow();
  });

  it('refuses what canonicalize refuses inside JSON: a lone surrogate in a key, a number past double range', () => {
    for (const text of ['{"a\\ud800":1}', '[1e400]']) {
      expect(() => fingerprintText('POST', 'https://a.test/x', { encoding: 'json', text }), text).toThrow(
        /body.*cannot be fingerprinted/,
      );
      expect(() => wholeObject('POST', 'https://a.test/x', { encoding: 'json', text }), text).toThrow();
    }
  });
});
