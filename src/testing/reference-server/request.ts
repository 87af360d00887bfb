/**
 * Reading an incoming request: its headers, its idempotency key (in either
 * dialect), whether its method is safe or needs a key, and everything known
 * about it once its body has been read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestIdentity } from './faults.js';
import type { DecodedBody } from './fingerprint.js';
import type { Fault } from './types.js';

/** Everything known about one request once its body has been read. */
export interface Exchange extends RequestIdentity {
  req: IncomingMessage;
  res: ServerResponse;
  body: DecodedBody;
  fingerprint: string;
  fault: Fault | undefined;
  /** The `reset()` generation the request arrived in; stale ones stay out of the ledger. */
  generation: number;
}

export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The IETF draft sends the key as a structured-field string (`"abc"`) while
 * Stripe-style clients send it bare; both name the same key.
 */
export function readKey(req: IncomingMessage, keyHeader: string): string | undefined {
  const raw = headerValue(req, keyHeader)?.trim();
  if (raw === undefined) return undefined;
  const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  return unquoted === '' ? undefined : unquoted;
}

export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

export function needsKey(method: string): boolean {
  return method === 'POST' || method === 'PATCH';
}
