/**
 * What a reference server saw from a browser, read as the pages sent it.
 * Chromium resends a request on its own when a kept-alive connection it
 * reused closes without an answer (its network stack, not the page: no
 * attempt of the client's). The resend carries the same key, so the server
 * must answer it as a replay; it is no second attempt by oncely, and a test
 * that counts the page's sends counts its first arrival only.
 */
import { expect } from 'vitest';
import type { LedgerEntry, ReferenceServer } from '../../src/testing.js';

/**
 * The first request of each key, in arrival order. Every later request of
 * a key already seen must have changed nothing (a replay, or an answer that
 * the first is still running); each is reported, so that a run that saw one says so.
 */
export function firstRequestPerKey(api: ReferenceServer, test: string): LedgerEntry[] {
  const seen = new Set<string | undefined>();
  const firsts: LedgerEntry[] = [];
  const again: LedgerEntry[] = [];
  for (const request of api.ledger.requests) {
    if (seen.has(request.key)) again.push(request);
    else {
      seen.add(request.key);
      firsts.push(request);
    }
  }
  if (again.length > 0) console.warn(`${test}: the browser resent ${again.length} request(s):`, again);
  for (const request of again) expect(['replay', 'in_progress']).toContain(request.outcome);
  return firsts;
}
