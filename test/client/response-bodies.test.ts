/**
 * Issue 14, items 1 and 5: what the server answered reaches the caller.
 * A final non-2xx answer is kept with the stopped operation and shown on
 * the error as `response`; a 2xx labelled JSON that is not JSON is a
 * `ResponseParseError` (the effect happened, the raw text is kept).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

import { createClient, hasErrorCode, OperationError, ResponseParseError } from '../../src/index.js';
import { closeAll, harness } from '../helpers/harness.js';

const servers: Server[] = [];
afterEach(async () => {
  await closeAll();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A plain node:http server on 127.0.0.1 answering every request with `answer`; counts requests. */
async function rawServer(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; requests: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    req.resume();
    req.on('end', () => answer(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count };
}

const decline = { error: { code: 'card_declined', decline_code: 'insufficient_funds', type: 'card_error' } };

describe('a final non-2xx answer is kept and shown on the error', () => {
  it('a Stripe decline (402): the body on the error as `response`, and in the record', async () => {
    const h = await harness(
      { endpoints: { 'POST /payments': { profile: 'stripe' } } },
      {
        profile: 'stripe',
        handle: () => ({ status: 402, body: decline, headers: { 'request-id': 'req_1', 'set-cookie': 'sid=1' } }),
      },
    );
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'pay-402', json: { amount: 4800 } }))
      .catch((e: unknown) => e)) as OperationError;
    expect(error).toBeInstanceOf(OperationError);
    expect(error.status).toBe(402);
    expect(error.response).toEqual({
      status: 402,
      // The headers a stored result keeps: never Set-Cookie.
      headers: { 'content-type': 'application/json', 'request-id': 'req_1' },
      body: decline,
    });
    // The stripe profile reads the decline: what a checkout shows and branches on.
    expect(error.providerError).toEqual({
      profile: 'stripe',
      code: 'card_declined',
      declineCode: 'insufficient_funds',
      type: 'card_error',
    });
    // A decline is a definite "not applied": failed, never unknown, and not retried.
    expect(error).toMatchObject({ state: 'failed', mayHaveTakenEffect: false });

    const record = await h.client.get('pay-402');
    expect(record?.failure?.response).toEqual({
      status: 402,
      headers: { 'content-type': 'application/json', 'request-id': 'req_1' },
      body: { encoding: 'json', text: JSON.stringify(decline) },
    });

    // A repeat send answers from the store, with the same response, and sends nothing.
    const again = (await h.client
      .send({ method: 'POST', url: '/payments', key: 'pay-402', json: { amount: 4800 } })
      .catch((e: unknown) => e)) as OperationError;
    expect(again.response?.body).toEqual(decline);
    expect(again.providerError?.declineCode).toBe('insufficient_funds');
    expect(h.server.ledger.requestsFor('pay-402')).toHaveLength(1);
  });

  it('the last answer of an operation that ran out of attempts (a 502 problem) is kept', async () => {
    const h = await harness({ policy: { maxAttempts: 2 } });
    h.server.script({ kind: 'status', status: 500 }, { kind: 'status', status: 502 });
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'tired', json: {} }))
      .catch((e: unknown) => e)) as OperationError;
    expect(error.reason).toBe('attempts');
    expect(error.response?.status).toBe(502);
    expect(error.response?.headers['content-type']).toBe('application/problem+json');
    expect(error.response?.body).toMatchObject({ status: 502 });
    // RFC 9457 members read from the problem+json body.
    expect(error.response?.problem).toMatchObject({ status: 502 });
  });

  it('a body over maxResponseBytes is kept up to the cap, marked truncated, shown as text', async () => {
    const h = await harness({ policy: { maxResponseBytes: 32 } });
    h.server.script({ kind: 'status', status: 422, body: { detail: 'z'.repeat(1_000) } });
    const error = (await h.rt
      .run(h.client.send({ method: 'POST', url: '/payments', key: 'long', json: {} }))
      .catch((e: unknown) => e)) as OperationError;
    expect(error.response).toMatchObject({ status: 422, truncated: true, body: `{"detail":"${'z'.repeat(21)}` });
    expect((await h.client.get('long'))?.failure?.response).toMatchObject({
      truncated: true,
      body: { encoding: 'text' },
    });
  });

  it('a stop without an answer (aborted before any attempt) keeps none', async () => {
    const h = await harness();
    const controller = new AbortController();
    controller.abort();
    await h.client
      .send({ method: 'POST', url: '/payments', key: 'none', json: {}, signal: controller.signal })
      .catch(() => undefined);
    const record = await h.client.get('none');
    expect(record?.failure).toBeDefined();
    expect(record?.failure?.response).toBeUndefined();
  });
});

describe('a 2xx labelled JSON whose body is not JSON', () => {
  it('rejects with ResponseParseError: succeeded, raw text kept, never resent', async () => {
    const api = await rawServer((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8' });
      res.end('<html>upstream said ok</html>');
    });
    const client = createClient({ baseUrl: api.url });
    const send = () => client.send({ method: 'POST', url: '/payments', key: 'html', json: { amount: 1 } });
    const error = await send().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseParseError);
    expect(hasErrorCode(error, 'response_parse')).toBe(true);
    expect(error).toMatchObject({
      key: 'html',
      state: 'succeeded',
      status: 201,
      text: '<html>upstream said ok</html>',
    });
    const record = await client.get('html');
    expect(record?.state).toBe('succeeded');
    expect(record?.result?.body).toEqual({ encoding: 'text', text: '<html>upstream said ok</html>' });
    // The repeat is answered from the store, the same way.
    const again = await send().catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ResponseParseError);
    expect((again as ResponseParseError).text).toBe('<html>upstream said ok</html>');
    expect(api.requests()).toBe(1);
    await client.close();
  });

  it('valid JSON, an empty body, and text labelled as text are no parse errors', async () => {
    const bodies: Record<string, [string, string]> = {
      '/json': ['application/vnd.api+json', '{"ok":true}'],
      '/empty': ['application/json', ''],
      '/text': ['text/plain', 'not json, and not labelled so'],
    };
    const api = await rawServer((req, res) => {
      const [type, body] = bodies[req.url ?? ''] ?? ['text/plain', '?'];
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    });
    const client = createClient({ baseUrl: api.url });
    expect((await client.send({ url: '/json' })).data).toEqual({ ok: true });
    expect((await client.send({ url: '/empty' })).data).toBeUndefined();
    expect((await client.send({ url: '/text' })).data).toBe('not json, and not labelled so');
    await client.close();
  });
});
