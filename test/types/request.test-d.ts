/**
 * Type tests for requests (issue 32, item 2): a request with a body must name
 * its method at compile time; the run-time check stays for JavaScript
 * callers (test/client/fetch-conventions.test.ts). Checked by
 * `npm run typecheck`, never executed (see outcome.test-d.ts).
 */
import { expectTypeOf } from 'vitest';
import type { OncelyClient, OncelyRequest, StandardSchemaV1 } from '../../src/index.js';

declare const client: OncelyClient;
declare const schema: StandardSchemaV1<unknown, { id: string }>;

void (async () => {
  // Without a body, `method` may be left out: a GET, as with fetch.
  await client.send({ url: '/items/1' });
  await client.send({ method: 'POST', url: '/payments', json: { amount: 4800 } });
  await client.send({ method: 'PUT', url: '/notes/1', body: 'text' });
  await client.send({ method: 'PUT', url: '/blobs/1', body: new Uint8Array([1]) });
  await client.enqueue({ method: 'POST', url: '/payments', json: { amount: 4800 } });

  // @ts-expect-error a JSON body without a method (the README's old PostgreSQL snippet)
  await client.send({ url: '/payments', json: { amount: 4800 } });
  // @ts-expect-error a raw body without a method
  await client.enqueue({ url: '/notes/1', body: 'text' });
  // @ts-expect-error `json` and `body` exclude each other
  await client.send({ method: 'POST', url: '/payments', json: {}, body: 'text' });

  // The schema still types the answer through the union.
  const result = await client.send({ method: 'POST', url: '/payments', json: {}, responseSchema: schema });
  expectTypeOf(result.data).toEqualTypeOf<{ id: string }>();
})();

// A request built apart from the call keeps the rule.
const read: OncelyRequest = { url: '/items/1' };
const write: OncelyRequest = { method: 'POST', url: '/payments', json: { amount: 1 } };
// @ts-expect-error a body needs a method here too
const unnamed: OncelyRequest = { url: '/payments', json: { amount: 1 } };
void [read, write, unnamed];
