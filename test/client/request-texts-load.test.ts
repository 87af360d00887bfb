/**
 * The texts of a refused request check (flow/request/request-texts.ts) are
 * loaded with `import()` only when a request is refused: the checks stay on
 * the send path, synchronous. A load that fails (a chunk the page could not
 * fetch) still rejects with an `InvalidRequestError` naming the field, code
 * `invalid_request`, nothing stored or sent; the next refusal loads it again
 * and reads as always.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidRequestError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';
import { rejection } from '../helpers/load-failure.js';

const load = vi.hoisted(() => ({ failuresLeft: 0, attempts: 0 }));

vi.mock('../../src/flow/request/request-texts.js', async (importOriginal) =>
  (await import('../helpers/load-failure.js')).failingLoad(load, 'request-texts.js', importOriginal),
);

afterEach(closeAll);

describe('the texts of a refused request', () => {
  it('are not loaded by a send that passes its checks; a failed load still names the field, the next reads as always', async () => {
    const h = await harness();
    h.server.script({ kind: 'status', status: 201 });
    await h.rt.run(h.client.send({ method: 'POST', url: '/payments', key: 'p1', json: {} }));
    expect(load.attempts).toBe(0);

    load.failuresLeft = 1;
    const stream = new ReadableStream<Uint8Array>() as unknown as string;
    const offline = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/upload', body: stream })));
    expect(load.attempts).toBe(1);
    expect(offline).toBeInstanceOf(InvalidRequestError);
    expect(offline).toMatchObject({ code: 'invalid_request', name: 'InvalidRequestError', field: 'body' });
    expect((offline as Error).message).toBe('Invalid request `body`: refused (bodyKind: ReadableStream)');
    expect((offline as InvalidRequestError).remediation).toMatch(/nothing was sent or stored/);

    const again = await rejection(h.rt.run(h.client.send({ method: 'POST', url: '/upload', body: stream })));
    expect(load.attempts).toBe(2);
    expect(again).toMatchObject({ code: 'invalid_request', field: 'body' });
    expect((again as Error).message).toBe(
      'Invalid request `body`: must be a string, Uint8Array or ArrayBuffer (got ReadableStream): its bytes are stored and resent after a crash, and a stream can be read only once; serialise it, or pass `json`',
    );
    expect(await h.client.list()).toHaveLength(1);
    expect(h.server.ledger.requests).toHaveLength(1);
  });

  it('read as before, each naming its field', async () => {
    const h = await harness();
    const message = async (request: Parameters<typeof h.client.send>[0]): Promise<string> =>
      ((await rejection(h.rt.run(h.client.send(request)))) as Error).message;
    expect(await message({ method: 'POST', url: 'http://127.0.0.1:6000/p', json: {} })).toBe(
      'Invalid request `url`: port 6000 is blocked by fetch',
    );
    expect(await message({ method: 'GET', url: '/p', body: 'x' })).toBe(
      'Invalid request `body`: a GET request cannot carry a body',
    );
    expect(await message({ method: 'POST', url: '/p', json: {}, headers: { 'x-trace': '1' } })).toBe(
      'Invalid request `headers.x-trace`: is not stored (only content-type, accept, content-language and `storeHeaders` names are): send it from the client `headers` callback, or add it to `storeHeaders`',
    );
    expect(await message({ method: 'POST', url: '/p', json: {}, meta: { at: new Date(0) } })).toBe(
      'Invalid request `meta.at`: is not a plain object (convert it to JSON data first)',
    );
    expect(await message({ method: 'POST', url: '/p', json: { n: 1n } })).toMatch(
      /^Invalid request `json`: cannot be serialised: .+/,
    );
    expect(await message({ method: 'POST', url: '/p?token=1', json: {} })).toBe(
      'Invalid request `url.query.token`: looks like a credential, never stored: send it from the client `headers` callback, or allow it in `storeQuery`',
    );
    expect(h.server.ledger.requests).toHaveLength(0);
  });
});
