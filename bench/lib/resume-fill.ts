/**
 * Fills a file-store directory with N pending operations, as a process that
 * wrote them ahead and then stopped would leave them: valid records (the
 * store validates every read), `pending`, due now, with no lease, each a
 * POST of its own JSON body to the benchmark's local server.
 *
 * The files are written directly, in the store's own layout (`fileNameFor`,
 * the record as one JSON line), rather than through `store.put`: three
 * fsyncs per record would make filling 100,000 records take minutes, and
 * what is measured is the resume, not the fill. One `sync` at the end puts
 * them on disk, so the resume does not share the disk with their writeback.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fingerprintOf } from '../../src/flow/request/key.js';
import { type OperationRecord, RECORD_VERSION } from '../../src/model.js';
import { fileNameFor } from '../../src/store/file/names.js';

/** A uuid-shaped key, unique per index (what `runtime.uuid()` keys look like). */
export function benchKey(i: number): string {
  const hex = i.toString(16).padStart(12, '0');
  return `0b6c1f6f-3b2d-4c7a-9a3e-${hex}`;
}

export async function pendingRecord(url: string, i: number, createdAt: number): Promise<OperationRecord> {
  const body = { encoding: 'json' as const, text: JSON.stringify({ amount: 4800 + (i % 100), currency: 'EUR', n: i }) };
  return {
    v: RECORD_VERSION,
    key: benchKey(i),
    request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body },
    fingerprint: await fingerprintOf('POST', url, body),
    policy: 'default',
    meta: { user: `u${i % 1000}` },
    createdAt,
    // The default policy's deadline is 60 s; a long drain must not run out of it.
    deadlineAt: createdAt + 6 * 3_600_000,
    state: 'pending',
    epoch: 1,
    attempts: [],
    // Due: spread over the last second, so the resume order is a real sort.
    nextAttemptAt: createdAt + (i % 997),
    backoff: { retries: 0, lastDelayMs: 0 },
  };
}

/** Writes `count` pending records into `dir` (created if missing). Resolves with the bytes written. */
export async function fillStore(dir: string, count: number, url: string): Promise<number> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const createdAt = Date.now() - 5_000;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const record = await pendingRecord(url, i, createdAt);
    const text = `${JSON.stringify(record)}\n`;
    bytes += text.length;
    fs.writeFileSync(join(dir, fileNameFor(record.key)), text, { mode: 0o600 });
  }
  if (process.platform !== 'win32') execFileSync('sync');
  return bytes;
}
