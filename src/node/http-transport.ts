/**
 * A `Transport` (flow/transport/transport.ts) that sends with node:http or
 * node:https, through the module's global agent: keep-alive on Node >= 19,
 * and its idle sockets are unref'd, so they never keep a process alive.
 * Node's `fetch` (undici) costs ~790 µs of CPU per POST at 8 in flight
 * against ~240 µs for `http.request` (BENCHMARKS.md), most of it in web
 * streams and the fetch algorithm, of which oncely uses nothing: it times,
 * retries and judges attempts itself.
 *
 * It keeps the transport contract exactly as the fetch transport does, so
 * an attempt observes the same thing through either: the same request on
 * the wire (fetch's default headers, request-headers.ts), headers as
 * fetch's `Headers` shows them (response-headers.ts), bodies decoded as
 * undici decodes them (content-decoding.ts) and read up to
 * `maxResponseBytes`, a 3xx as a redirect never followed (with its status
 * and Location, which Node's fetch would hide), what node:http refuses
 * while the request is built as unsendable, a failure in flight as a
 * rejection with node:http's error (its `code` read by the attempt, as it
 * reads undici's), an abort as a rejection with the signal's reason.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import type { Observation } from '../flow/decide/classify.js';
import { base64ToBytes } from '../flow/request/bytes.js';
import {
  describe,
  noAnswer,
  type Transport,
  type TransportContext,
  type TransportRequest,
  type TransportResult,
  unsendable,
} from '../flow/transport/transport.js';
import { decodersFor } from './content-decoding.js';
import { wireHeaders } from './request-headers.js';
import { fetchLikeHeaders } from './response-headers.js';

/** Methods `new Request` refuses (Fetch standard, "forbidden method"): unsendable, as through fetch. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** Sends each request with `http.request` or `https.request` (by the URL's scheme). */
export function nodeHttpTransport(): Transport {
  return (request, context) => {
    if (context.signal.aborted) return Promise.reject(context.signal.reason);
    const built = build(request);
    if (!(built instanceof http.ClientRequest)) return Promise.resolve(noAnswer(built));
    return exchange(built, request.method, context);
  };
}

/**
 * The request, built and its body written (node:http sends it once the
 * socket is ready); what node:http refuses synchronously (a URL, a method or
 * a header it cannot send) or fetch would refuse (credentials in the URL, a
 * forbidden method) is unsendable: no byte left.
 */
function build(request: TransportRequest): http.ClientRequest | Observation {
  try {
    const url = new URL(request.url);
    if (url.username !== '' || url.password !== '') return unsendable('the URL holds credentials');
    if (FORBIDDEN_METHODS.has(request.method.toUpperCase()))
      return unsendable(`${request.method} is a forbidden method`);
    const body = request.body;
    const payload = body === undefined ? undefined : body.encoding === 'base64' ? base64ToBytes(body.data) : body.text;
    const length =
      payload === undefined ? undefined : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
    const headers = wireHeaders(request.headers, length, typeof payload === 'string');
    const send = url.protocol === 'https:' ? https.request : url.protocol === 'http:' ? http.request : undefined;
    if (send === undefined) return unsendable(`${url.protocol} is not http: or https:`);
    const outgoing = send(url, { method: request.method, headers });
    outgoing.end(payload);
    return outgoing;
  } catch (error) {
    return unsendable(error instanceof Error ? describe(error) : String(error));
  }
}

/** Waits for the answer and reads it; settles once, and lets go of the signal as it does. */
function exchange(outgoing: http.ClientRequest, method: string, context: TransportContext): Promise<TransportResult> {
  const { signal, maxResponseBytes } = context;
  return new Promise<TransportResult>((resolve, reject) => {
    let settled = false;
    let stages: Readable[] = [];
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    const stop = (): void => {
      outgoing.destroy();
      for (const stage of stages) stage.destroy();
    };
    // As fetch does: the abort's reason is the rejection, whatever it is; the attempt knows its own.
    const onAbort = (): void => {
      finish(() => reject(signal.reason));
      stop();
    };
    signal.addEventListener('abort', onAbort);
    // Stays attached: node:http emits errors after a destroy (a "socket hang up") that nobody needs.
    outgoing.on('error', (error) => finish(() => reject(error)));
    outgoing.on('response', (answer) => {
      const headers = fetchLikeHeaders(answer.rawHeaders);
      const status = answer.statusCode ?? 0;
      // Also an answer cut off before its end (node:http: ECONNRESET, "aborted"), as undici's body read fails then.
      answer.on('error', (error) => finish(() => reject(error)));
      if (status >= 300 && status < 400) {
        // Never followed, never read: the attempt aborts the signal next anyway.
        answer.destroy();
        finish(() => resolve(noAnswer({ kind: 'redirect', status, location: headers.get('location') ?? undefined })));
        return;
      }
      let decoders: Readable[];
      try {
        decoders = decodersFor(method, status, headers.get('content-encoding') ?? undefined);
      } catch (error) {
        // An answer fetch would fail as it arrives: failed in flight, as there (it may have been applied).
        answer.destroy();
        finish(() => reject(error));
        return;
      }
      stages = [answer, ...decoders];
      for (const stage of stages.slice(1)) stage.on('error', (error) => finish(() => reject(error)));
      const body = stages.reduce((from, to) => from.pipe(to as NodeJS.WritableStream & Readable));
      const sink = new BodySink(maxResponseBytes);
      body.on('data', (chunk: Buffer) => {
        if (sink.add(chunk)) return;
        // The ceiling: the rest is never read, and the connection is not kept half-read.
        stop();
        finish(() => resolve(answerOf(status, headers, sink, maxResponseBytes)));
      });
      body.on('end', () => finish(() => resolve(answerOf(status, headers, sink, maxResponseBytes))));
    });
  });
}

function answerOf(
  status: number,
  headers: ReturnType<typeof fetchLikeHeaders>,
  sink: BodySink,
  maxResponseBytes: number,
): TransportResult {
  const bytes = sink.bytes();
  const observation: Observation = {
    kind: 'response',
    status,
    header: headers.get,
    // Only body rules of non-2xx answers read it: decoded on demand, not on every attempt.
    get text() {
      return utf8.decode(bytes);
    },
  };
  if (sink.truncated) observation.bodyTruncatedAtBytes = maxResponseBytes;
  return { observation, headers: headers.record, bytes };
}

/** Body chunks up to a ceiling: never more than the ceiling is held. */
class BodySink {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(readonly limitBytes: number) {}

  /** Keeps what fits; false once the ceiling was passed (the rest is dropped). */
  add(chunk: Buffer): boolean {
    const room = this.limitBytes - this.#size;
    if (chunk.byteLength > room) {
      this.#chunks.push(chunk.subarray(0, room));
      this.#size = this.limitBytes;
      this.truncated = true;
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.byteLength;
    return true;
  }

  /** One plain array of its own (no view into a socket's larger buffer kept alive with a stored result). */
  bytes(): Uint8Array {
    const bytes = new Uint8Array(this.#size);
    let at = 0;
    for (const chunk of this.#chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    return bytes;
  }
}

/** Stateless between calls (no `stream` option): one instance serves every attempt. */
const utf8 = new TextDecoder();
