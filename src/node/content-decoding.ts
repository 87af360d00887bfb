/**
 * Response bodies decoded as Node's `fetch` (undici) decodes them, so the
 * bytes an attempt keeps do not depend on the transport: `gzip`/`x-gzip`,
 * `deflate` (zlib-wrapped or raw, told apart by the first byte) and `br`,
 * last applied first; a coding it does not know leaves the whole body as
 * sent. Nothing is decoded for HEAD, for statuses that carry no body, or
 * when there is no `content-encoding`; more than five codings fail the
 * answer, as in undici. Lenient as undici is (sync flush):
 * a body cut short decodes as far as it goes.
 */
import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';

/** Statuses whose answers have no body (Fetch standard, "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const ZLIB_OPTIONS: zlib.ZlibOptions = {
  flush: zlib.constants.Z_SYNC_FLUSH,
  finishFlush: zlib.constants.Z_SYNC_FLUSH,
};
const BROTLI_OPTIONS: zlib.BrotliOptions = {
  flush: zlib.constants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
};

/** Codings undici decodes at most in one answer; more fail it. */
const MAX_CODINGS = 5;

/**
 * The decoders for one answer, outermost coding first (pipe the body
 * through them in this order); empty when the body is kept as sent.
 * Throws where undici fails the answer (more than five codings).
 */
export function decodersFor(method: string, status: number, contentEncoding: string | undefined): Transform[] {
  if (contentEncoding === undefined || contentEncoding === '') return [];
  if (method === 'HEAD' || method === 'CONNECT' || NULL_BODY_STATUSES.has(status)) return [];
  const codings = contentEncoding.toLowerCase().split(',');
  // undici's guard against a decompression chain without end (it fails the response, known codings or not).
  if (codings.length > MAX_CODINGS) {
    throw new Error(`too many content-encodings in response: ${codings.length}, maximum allowed is ${MAX_CODINGS}`);
  }
  const decoders: Transform[] = [];
  for (let at = codings.length - 1; at >= 0; at--) {
    const decoder = decoderOf((codings[at] as string).trim());
    // One coding not understood: the body is kept exactly as sent (so does fetch).
    if (decoder === undefined) return [];
    decoders.push(decoder);
  }
  return decoders;
}

function decoderOf(coding: string): Transform | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(ZLIB_OPTIONS);
    case 'deflate':
      return new DeflateDecoder();
    case 'br':
      return zlib.createBrotliDecompress(BROTLI_OPTIONS);
    default:
      return undefined;
  }
}

/**
 * `deflate` as servers send it: RFC 1950 (zlib-wrapped) as the standard
 * says, or a raw RFC 1951 stream as some servers do; the first byte tells
 * (a zlib header's low nibble is 8, "deflate").
 */
class DeflateDecoder extends Transform {
  #inner: zlib.Inflate | zlib.InflateRaw | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.#inner === undefined) {
      if (chunk.length === 0) {
        done();
        return;
      }
      const inner =
        ((chunk[0] as number) & 0x0f) === 0x08 ? zlib.createInflate(ZLIB_OPTIONS) : zlib.createInflateRaw(ZLIB_OPTIONS);
      inner.on('data', (data: Buffer) => this.push(data));
      inner.on('error', (error) => this.destroy(error));
      this.#inner = inner;
    }
    this.#inner.write(chunk, () => done());
  }

  override _flush(done: TransformCallback): void {
    if (this.#inner === undefined) {
      done();
      return;
    }
    this.#inner.once('end', () => done());
    this.#inner.end();
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.#inner?.destroy();
    done(error);
  }
}
