/**
 * The journals of this process's open store handles (journal.ts): which
 * segment tokens are live here, and the write at exit.
 *
 * A process that ends without closing its stores (`process.exit()`, the end
 * of a script that forgot `close()`) still writes the lines it queued (the
 * relaxed ones) into its segment, synchronously, without an fsync: the page
 * cache keeps them for whoever settles the segment next (recovery.ts), as it
 * keeps a shared store's renamed files. Only a crash or a power cut loses
 * them then, as the table of docs/stores.md says.
 */

/** A journal as the write at exit sees it. */
interface OpenJournal {
  /** Writes the lines still queued, synchronously; never throws. */
  writeQueuedSync(): void;
}

/** Tokens of the journals of this process's open store handles. */
const liveTokens = new Set<string>();
const openJournals = new Set<OpenJournal>();
let exitHookInstalled = false;

function writeQueuedAtExit(): void {
  for (const journal of openJournals) journal.writeQueuedSync();
}

/** A journal opened: its segments are live, and its queued lines are written at exit. */
export function registerOpenJournal(token: string, journal: OpenJournal): void {
  liveTokens.add(token);
  openJournals.add(journal);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', writeQueuedAtExit);
  }
}

/** A journal closed. */
export function unregisterOpenJournal(token: string, journal: OpenJournal): void {
  liveTokens.delete(token);
  openJournals.delete(journal);
}

/** Whether a segment of this process (by its token) belongs to an open handle. */
export function isLiveJournalToken(token: string): boolean {
  return liveTokens.has(token);
}
