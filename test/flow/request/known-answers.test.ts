/**
 * Known-answer vectors for `deriveKey` and `fingerprintOf`.
 *
 * The expected values were NOT produced by oncely: they come from the
 * standalone script below (plain Node, `node:crypto` only, no project code;
 * every RFC 8785 canonical text is typed out by hand from the recipe in
 * src/flow/request/key.ts). Its output is pasted into the constants of this file.
 * If a change to the key or fingerprint code breaks one of these, it changed
 * keys and fingerprints users have already stored: that needs a new recipe
 * version, never an edit of these constants.
 *
 * Recipe (src/flow/request/key.ts):
 * - identity text = RFC 8785 of {recipe: 'oncely.key/1', namespace, version, fields}
 * - no secret: UUIDv5 of the identity text in namespace b0f5c6a2-3c1e-5d8e-9a47-0c5e1d7f2b61
 * - secret: the first 16 bytes of HMAC-SHA-256(secret, identity text) as a UUIDv8
 * - fingerprint: hex SHA-256 of RFC 8785 of {method (upper case), url, body},
 *   body = null | {json: value} | {text} | {base64}
 *
 * ```js
 * // Independent known answers for deriveKey and fingerprintOf: node:crypto only.
 * // Every canonical (RFC 8785) text below is written out by hand.
 * import { createHash, createHmac } from 'node:crypto';
 *
 * const NS = 'b0f5c6a2-3c1e-5d8e-9a47-0c5e1d7f2b61'; // oncely's v5 namespace, recipe 1
 * const uuid = (b, version) => {
 *   b = Buffer.from(b.subarray(0, 16));
 *   b[6] = (b[6] & 0x0f) | (version << 4);
 *   b[8] = (b[8] & 0x3f) | 0x80;
 *   const h = b.toString('hex');
 *   return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
 * };
 * const v5 = (name) =>
 *   uuid(createHash('sha1').update(Buffer.from(NS.replaceAll('-', ''), 'hex')).update(name, 'utf8').digest(), 5);
 * const v8 = (secret, name) => uuid(createHmac('sha256', secret).update(name, 'utf8').digest(), 8);
 * const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
 *
 * // Identities: {"fields":…,"namespace":…,"recipe":"oncely.key/1","version":…}, keys sorted by UTF-16 code units.
 * const PAY_V1 =
 *   '{"fields":{"cart":"c_9","orderVersion":3,"tenant":"t_1"},"namespace":"checkout.pay","recipe":"oncely.key/1","version":1}';
 * const REFUND_V1 =
 *   '{"fields":{"cart":"c_9","orderVersion":3,"tenant":"t_1"},"namespace":"checkout.refund","recipe":"oncely.key/1","version":1}';
 * const PAY_V2 =
 *   '{"fields":{"cart":"c_9","orderVersion":3,"tenant":"t_1"},"namespace":"checkout.pay","recipe":"oncely.key/1","version":2}';
 * // Numbers as ECMAScript prints them (RFC 8785 §3.2.2.3): 1e21 → 1e+21, -0 → 0, 0.1 → 0.1.
 * const NUMBERS =
 *   '{"fields":{"amount":1e+21,"flag":true,"off":false,"ratio":0.1,"zero":0},"namespace":"ledger.post","recipe":"oncely.key/1","version":0}';
 * // RFC 8785 §3.2.3 sorting example as field names; only \r is escaped, the rest is raw UTF-8.
 * const UNICODE =
 *   '{"fields":{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"},"namespace":"i18n.名前","recipe":"oncely.key/1","version":7}';
 *
 * const BYTES = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
 * console.log('PAY_V1', v5(PAY_V1));
 * console.log('REFUND_V1', v5(REFUND_V1));
 * console.log('PAY_V2', v5(PAY_V2));
 * console.log('NUMBERS', v5(NUMBERS));
 * console.log('UNICODE', v5(UNICODE));
 * console.log('PAY_V1 secret "one"', v8('one', PAY_V1));
 * console.log('PAY_V1 secret "two"', v8('two', PAY_V1));
 * console.log('PAY_V1 secret bytes 0..31', v8(BYTES, PAY_V1));
 * console.log('PAY_V2 secret "one"', v8('one', PAY_V2));
 * console.log('UNICODE secret "sécret-🔑"', v8(Buffer.from('sécret-🔑', 'utf8'), UNICODE));
 * console.log('NUMBERS secret "one"', v8('one', NUMBERS));
 *
 * // Fingerprints: {"body":…,"method":…,"url":…}.
 * const URL = 'https://api.example.test/v1/payments';
 * console.log('FP no body', sha256(`{"body":null,"method":"POST","url":"${URL}"}`));
 * console.log(
 *   'FP order',
 *   sha256(`{"body":{"json":{"amount":4800,"currency":"EUR","orderId":"ord_4819"}},"method":"POST","url":"${URL}"}`),
 * );
 * // RFC 8785 §3.2.2 example, canonical form as printed in the RFC.
 * console.log(
 *   'FP rfc8785 numbers',
 *   sha256(
 *     `{"body":{"json":{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"\u20ac$\\u000f\\nA'B\\"\\\\\\\\\\"/"}},"method":"PUT","url":"${URL}/p_1"}`,
 *   ),
 * );
 * console.log(
 *   'FP rfc8785 sorting',
 *   sha256(
 *     `{"body":{"json":{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}},"method":"POST","url":"${URL}"}`,
 *   ),
 * );
 * console.log('FP text', sha256(`{"body":{"text":"café ☕ a=1&b=2"},"method":"PATCH","url":"${URL}?q=é"}`));
 * console.log('FP base64', sha256(`{"body":{"base64":"AAEC/w=="},"method":"POST","url":"${URL}/upload"}`));
 * ```
 *
 * Its output (`node known-answers.mjs`, Node 20.20):
 *
 *   PAY_V1 32bbce4c-10fd-5f44-8f5b-bb897179a612
 *   REFUND_V1 4e5b5e23-6cf3-5ce0-83f3-7cce88d84979
 *   PAY_V2 34d9c1d0-eef3-5398-ae29-f2c1984fc435
 *   NUMBERS 82954574-e39a-5a93-b10f-1580a05d2c5e
 *   UNICODE 3b4bf04f-22e5-5b87-8164-38fffd7d1f35
 *   PAY_V1 secret "one" 2ac06add-e9b8-8ea9-b21e-25e5c197a399
 *   PAY_V1 secret "two" aad60f63-e391-8176-9e33-38d084c79a61
 *   PAY_V1 secret bytes 0..31 5d341be1-199a-8833-8460-c8c635641bf7
 *   PAY_V2 secret "one" 2bf4fee3-613e-8e67-b16c-4d7d72274421
 *   UNICODE secret "sécret-🔑" 782a8924-633f-8957-9d39-85f913c11fa7
 *   NUMBERS secret "one" 67ace306-5edc-840b-9431-c4a01c608058
 *   FP no body b9d2d79df02f6a6a3b7b6418a23c61510c02d6fd2d8b1d5b61a935f6b95399f9
 *   FP order 355748c79d559bd370f8b2d49234d488dc8faeedd494bd812c4e53e7e56f6f3e
 *   FP rfc8785 numbers 8394fc80397ef8bdf3eafcfaa04c681b502294310a8c9abe6673f05abfbd703d
 *   FP rfc8785 sorting 8f4933c9e1db7a8520897509fd2b3fefdc970d33635ccdcdb8a46e5100f78b15
 *   FP text 5d6bf479c92c46f1fb900d967d47222855f686d7161239cc557582a7f0a604bd
 *   FP base64 72f4702db52d6544199e8dfeed832b7bf8853a8fb5bb324c7d48a26094ff45f8
 */
import { describe, expect, it } from 'vitest';
import { deriveKey, fingerprintOf } from '../../../src/flow/request/key.js';
import { nodeSha256Hex } from '../../../src/node/sha256.js';

const PAY = { tenant: 't_1', cart: 'c_9', orderVersion: 3 };
/** The same identity with its fields in other orders: the key must not move. */
const PAY_SHUFFLED = [
  { orderVersion: 3, cart: 'c_9', tenant: 't_1' },
  { cart: 'c_9', tenant: 't_1', orderVersion: 3 },
];
/** RFC 8785 §3.2.3's sorting example, in its original (unsorted) order. */
const UNICODE_FIELDS = {
  '\u20ac': 'Euro Sign',
  '\r': 'Carriage Return',
  '\ufb33': 'Hebrew Letter Dalet With Dagesh',
  '1': 'One',
  '\ud83d\ude00': 'Emoji: Grinning Face',
  '\u0080': 'Control',
  '\u00f6': 'Latin Small Letter O With Diaeresis',
};
const NUMBER_FIELDS = { ratio: 0.1, amount: 1e21, zero: -0, flag: true, off: false };
const BYTES = Uint8Array.from({ length: 32 }, (_, i) => i);

const KEY_VECTORS: ReadonlyArray<{
  name: string;
  input: Parameters<typeof deriveKey>[0];
  secret?: string | Uint8Array;
  expected: string;
}> = [
  {
    name: 'v5, checkout.pay v1',
    input: { namespace: 'checkout.pay', version: 1, fields: PAY },
    expected: '32bbce4c-10fd-5f44-8f5b-bb897179a612',
  },
  {
    name: 'v5, another namespace',
    input: { namespace: 'checkout.refund', version: 1, fields: PAY },
    expected: '4e5b5e23-6cf3-5ce0-83f3-7cce88d84979',
  },
  {
    name: 'v5, another recipe version',
    input: { namespace: 'checkout.pay', version: 2, fields: PAY },
    expected: '34d9c1d0-eef3-5398-ae29-f2c1984fc435',
  },
  {
    name: 'v5, numbers (1e21, 0.1, -0) and booleans',
    input: { namespace: 'ledger.post', version: 0, fields: NUMBER_FIELDS },
    expected: '82954574-e39a-5a93-b10f-1580a05d2c5e',
  },
  {
    name: 'v5, unicode field names (RFC 8785 sorting) and namespace',
    input: { namespace: 'i18n.名前', version: 7, fields: UNICODE_FIELDS },
    expected: '3b4bf04f-22e5-5b87-8164-38fffd7d1f35',
  },
  {
    name: 'v8, secret "one"',
    input: { namespace: 'checkout.pay', version: 1, fields: PAY },
    secret: 'one',
    expected: '2ac06add-e9b8-8ea9-b21e-25e5c197a399',
  },
  {
    name: 'v8, secret "two"',
    input: { namespace: 'checkout.pay', version: 1, fields: PAY },
    secret: 'two',
    expected: 'aad60f63-e391-8176-9e33-38d084c79a61',
  },
  {
    name: 'v8, secret bytes 0..31',
    input: { namespace: 'checkout.pay', version: 1, fields: PAY },
    secret: BYTES,
    expected: '5d341be1-199a-8833-8460-c8c635641bf7',
  },
  {
    name: 'v8, another recipe version',
    input: { namespace: 'checkout.pay', version: 2, fields: PAY },
    secret: 'one',
    expected: '2bf4fee3-613e-8e67-b16c-4d7d72274421',
  },
  {
    name: 'v8, unicode identity and unicode secret',
    input: { namespace: 'i18n.名前', version: 7, fields: UNICODE_FIELDS },
    secret: 'sécret-🔑',
    expected: '782a8924-633f-8957-9d39-85f913c11fa7',
  },
  {
    name: 'v8, numbers and booleans',
    input: { namespace: 'ledger.post', version: 0, fields: NUMBER_FIELDS },
    secret: 'one',
    expected: '67ace306-5edc-840b-9431-c4a01c608058',
  },
];

const URL = 'https://api.example.test/v1/payments';
/** RFC 8785 §3.2.2's example input, verbatim (its canonical form is in the script above). */
const RFC8785_NUMBERS_INPUT = String.raw`{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`;

const FINGERPRINT_VECTORS: ReadonlyArray<{
  name: string;
  /** Method, URL, body: the hash is what the two runs below vary. */
  args: [method: string, url: string, body: Parameters<typeof fingerprintOf>[2]];
  expected: string;
}> = [
  {
    name: 'no body',
    args: ['POST', URL, undefined],
    expected: 'b9d2d79df02f6a6a3b7b6418a23c61510c02d6fd2d8b1d5b61a935f6b95399f9',
  },
  {
    name: 'JSON body in one order',
    args: ['POST', URL, { encoding: 'json', text: '{"orderId":"ord_4819","amount":4800,"currency":"EUR"}' }],
    expected: '355748c79d559bd370f8b2d49234d488dc8faeedd494bd812c4e53e7e56f6f3e',
  },
  {
    name: 'the same JSON reordered, spaced, lower-case method',
    args: ['post', URL, { encoding: 'json', text: '{ "currency": "EUR",\n  "amount": 4800, "orderId": "ord_4819" }' }],
    expected: '355748c79d559bd370f8b2d49234d488dc8faeedd494bd812c4e53e7e56f6f3e',
  },
  {
    name: 'RFC 8785 §3.2.2 numbers, strings and literals',
    args: ['put', `${URL}/p_1`, { encoding: 'json', text: RFC8785_NUMBERS_INPUT }],
    expected: '8394fc80397ef8bdf3eafcfaa04c681b502294310a8c9abe6673f05abfbd703d',
  },
  {
    name: 'RFC 8785 §3.2.3 property sorting (unicode keys)',
    args: ['POST', URL, { encoding: 'json', text: JSON.stringify(UNICODE_FIELDS) }],
    expected: '8f4933c9e1db7a8520897509fd2b3fefdc970d33635ccdcdb8a46e5100f78b15',
  },
  {
    name: 'unicode text body and query',
    args: ['PATCH', `${URL}?q=é`, { encoding: 'text', text: 'café ☕ a=1&b=2' }],
    expected: '5d6bf479c92c46f1fb900d967d47222855f686d7161239cc557582a7f0a604bd',
  },
  {
    name: 'base64 body',
    args: ['POST', `${URL}/upload`, { encoding: 'base64', data: 'AAEC/w==' }],
    expected: '72f4702db52d6544199e8dfeed832b7bf8853a8fb5bb324c7d48a26094ff45f8',
  },
];

describe('deriveKey known answers', () => {
  it.each(KEY_VECTORS)('$name', async ({ input, secret, expected }) => {
    expect(await deriveKey(input, secret === undefined ? {} : { secret })).toBe(expected);
  });

  it('field order never changes a key, with or without a secret', async () => {
    for (const fields of PAY_SHUFFLED) {
      const input = { namespace: 'checkout.pay', version: 1, fields };
      expect(await deriveKey(input)).toBe('32bbce4c-10fd-5f44-8f5b-bb897179a612');
      expect(await deriveKey(input, { secret: 'one' })).toBe('2ac06add-e9b8-8ea9-b21e-25e5c197a399');
    }
    const sorted = Object.fromEntries(Object.entries(UNICODE_FIELDS).sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(await deriveKey({ namespace: 'i18n.名前', version: 7, fields: sorted })).toBe(
      '3b4bf04f-22e5-5b87-8164-38fffd7d1f35',
    );
  });

  it('a string secret is its UTF-8 bytes', async () => {
    const input = { namespace: 'i18n.名前', version: 7, fields: UNICODE_FIELDS };
    expect(await deriveKey(input, { secret: new TextEncoder().encode('sécret-🔑') })).toBe(
      '782a8924-633f-8957-9d39-85f913c11fa7',
    );
  });
});

describe('fingerprintOf known answers', () => {
  it.each(FINGERPRINT_VECTORS)('$name', async ({ args, expected }) => {
    expect(await fingerprintOf(...args)).toBe(expected);
  });

  it.each(FINGERPRINT_VECTORS)('$name (node:crypto, as oncely/node injects it)', async ({ args, expected }) => {
    expect(await fingerprintOf(...args, nodeSha256Hex)).toBe(expected);
  });
});
