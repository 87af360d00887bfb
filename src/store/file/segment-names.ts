/**
 * The record names a journal segment holds lines for, read back from the
 * segment file a chunk at a time: what its checkpoint makes durable.
 *
 * Why from the file and not from memory: a segment takes up to 32 MB of
 * lines, tens of thousands of records, and under sustained writes several
 * retired segments wait for (or are in) their checkpoints at once. Held in
 * memory, their names were most of what the store's heap grew by in a
 * 100,000-operation drain (a tenth of a kilobyte each, for as long as a
 * minute or more). The file has them all, in the order they were written,
 * and nothing is held but the chunk being read.
 *
 * Every line is `{"n":<name>,…}` (journal.ts writes `n` first), and record
 * names are plain ASCII without quotes or backslashes (names.ts), so a name
 * is read without parsing the line; any other line is parsed in full, and
 * one that does not parse (a torn last line: the writer died mid-append)
 * names nothing.
 */
import * as fs from 'node:fs';
import { isErrno } from './io.js';

// The suffixes of segment files themselves: here, below both segments.ts and checkpoint.ts, which need them.

/** The suffix of every segment name (segments.ts says what comes before it). */
export const SEGMENT_SUFFIX = '.log';
/** The suffix of a segment a failed checkpoint marked: recovery writes its records again (checkpoint.ts). */
export const RESYNC_SUFFIX = `.resync${SEGMENT_SUFFIX}`;

/** Bytes read per round trip to the thread pool. */
const CHUNK_BYTES = 256 * 1024;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const PREFIX = Buffer.from('{"n":"');

/**
 * Calls `visit` with the record name of every whole line of the segment at
 * `path`, in file order (a name as often as it has lines), one at a time: a
 * visit is awaited before the next. Nothing when the file is gone or not a
 * regular file.
 *
 * @param chunkBytes read size (tests make lines cross chunks with a small one)
 */
export async function forEachSegmentName(
  path: string,
  visit: (name: string) => Promise<void>,
  chunkBytes = CHUNK_BYTES,
): Promise<void> {
  let handle: fs.promises.FileHandle;
  try {
    // Without blocking: something else (a FIFO) may sit where the segment was.
    handle = await fs.promises.open(path, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    // Gone, a FIFO without a writer, or a directory (Windows refuses to open one): nothing of ours to read.
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENXIO') || isErrno(error, 'EISDIR')) return;
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return;
    const chunk = Buffer.allocUnsafe(chunkBytes);
    // The start of a line that earlier chunks ended in (copied: `chunk` is reused). Only the new chunk is
    // searched for its end, so a line longer than many chunks costs one copy, not one per chunk.
    let partial: Buffer[] = [];
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunkBytes, null);
      if (bytesRead === 0) return;
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
        let name: string | undefined;
        if (partial.length === 0) name = nameOfLine(data, start, end);
        else {
          const line = Buffer.concat([...partial, data.subarray(0, end)]);
          partial = [];
          name = nameOfLine(line, 0, line.length);
        }
        start = end + 1;
        if (name !== undefined) await visit(name);
      }
      if (start < data.length) partial.push(Buffer.from(data.subarray(start)));
    }
  } finally {
    await handle.close();
  }
}

/** The record name of the line `data[start, end)`, or undefined when it names none. */
function nameOfLine(data: Buffer, start: number, end: number): string | undefined {
  const from = start + PREFIX.length;
  if (from <= end && data.compare(PREFIX, 0, PREFIX.length, start, from) === 0) {
    const quote = data.indexOf(QUOTE, from);
    if (quote !== -1 && quote < end) {
      // A fresh string (not a slice of the chunk's text), so a name kept does not keep the chunk.
      if (!data.subarray(from, quote).includes(BACKSLASH)) return data.toString('utf8', from, quote);
    }
  }
  try {
    const line: unknown = JSON.parse(data.toString('utf8', start, end));
    const name = typeof line === 'object' && line !== null ? (line as { n?: unknown }).n : undefined;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}
