// Preamble of a block that builds a Fetch-style handler: it is called, twice with one key.
import { check as checkSnippet } from '../route.js';

/** The handler runs the request once and replays its answer to the repeat. */
export async function snippetDone(exports: Record<string, unknown>): Promise<void> {
  const handler = exports.POST as (request: Request) => Promise<Response>;
  checkSnippet(typeof handler === 'function', 'the block exports POST');
  const request = () =>
    new Request('https://api.example.com/payments', {
      method: 'POST',
      headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json', authorization: 'Bearer alice' },
      body: JSON.stringify({ amount: 4800 }),
    });
  const first = await handler(request());
  const second = await handler(request());
  checkSnippet(first.status === 201, `the first answer is 201 (${first.status})`);
  checkSnippet(second.headers.get('idempotent-replayed') === 'true', 'the repeat is a replay');
  checkSnippet((await second.text()) === (await first.text()), 'the replay has the same body');
}
