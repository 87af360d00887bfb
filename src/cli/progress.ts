/**
 * What `retry` and `drain` wait for, as it happens: the next attempt's time
 * and why (the last answer, the server's hint), operations held by the
 * outage gate while an API is down, leases another owner holds until a
 * given time. Lines go to stderr (stdout keeps the result); a terminal gets
 * a progress bar redrawn under them. In `--json` mode nothing is drawn and
 * the waits are returned for the JSON result.
 */
import type { OncelyClient, OperationRecord } from '../index.js';
import type { RecordSummary } from '../store/store.js';
import { formatTime, progressBar } from './format.js';

/** One thing the command is waiting for. */
export interface Wait {
  key: string;
  /** Epoch ms it waits until. */
  until: number;
  kind: 'next_attempt' | 'held' | 'lease';
  reason: string;
}

export class Progress {
  readonly waits: Wait[] = [];
  total = 0;
  done = 0;
  readonly #write: (text: string) => void;
  readonly #tty: boolean;
  readonly #quiet: boolean;
  readonly #now: () => number;
  readonly #showBar: boolean;
  /** The last attempt detail per key, for the reason of the wait that follows it. */
  readonly #lastAttempt = new Map<string, string>();

  constructor(options: {
    write: (text: string) => void;
    tty: boolean;
    quiet: boolean;
    bar: boolean;
    now?: () => number;
  }) {
    this.#write = options.write;
    this.#tty = options.tty;
    this.#quiet = options.quiet;
    this.#showBar = options.bar;
    this.#now = options.now ?? Date.now;
  }

  /** Follows the client's events until the returned function is called. */
  attach(client: OncelyClient): () => void {
    const offs = [
      client.on('attempt:ended', (e) => {
        this.#lastAttempt.set(e.key, `attempt ${e.attempt} ended ${e.class}: ${e.detail}`);
      }),
      client.on('retry:scheduled', (e) => {
        const hint = e.hintMs === undefined ? '' : `; the server asked to wait ${e.hintMs} ms`;
        const last = this.#lastAttempt.get(e.key) ?? `attempt ${e.attempt} ended ${e.reason}`;
        this.wait({ key: e.key, until: this.#now() + e.delayMs, kind: 'next_attempt', reason: `${last}${hint}` });
      }),
      client.on('held', (e) => {
        const host = hostOf(e.operation);
        this.wait({
          key: e.key,
          until: e.untilMs,
          kind: 'held',
          reason: `held by the outage gate: ${host} is failing (API down?); one probe at a time, the others wait`,
        });
      }),
    ];
    return () => {
      for (const off of offs) off();
    };
  }

  /** Waits known before anything runs: leases of other owners, attempts scheduled later. */
  async announce(
    open: readonly RecordSummary[],
    owner: string,
    get: (key: string) => Promise<OperationRecord | undefined>,
  ) {
    const now = this.#now();
    for (const r of open) {
      if (r.lease !== undefined && r.lease.until > now && r.lease.owner !== owner) {
        this.wait({
          key: r.key,
          until: r.lease.until,
          kind: 'lease',
          reason: `leased by another owner (${r.lease.owner}); taken over once its lease stays unchanged past its end and its attempt timeout + lease length (+1 s) on this process's clock, unless it finishes first`,
        });
      } else if (r.state === 'pending' && r.nextAttemptAt > now) {
        const last = (await get(r.key))?.attempts.at(-1);
        const why =
          last === undefined
            ? 'scheduled'
            : `attempt ${last.n} ended ${last.class ?? 'open'}${last.status === undefined ? '' : ` ${last.status}`}`;
        this.wait({ key: r.key, until: r.nextAttemptAt, kind: 'next_attempt', reason: why });
      }
    }
  }

  wait(wait: Wait): void {
    this.waits.push(wait);
    this.line(waitLine(wait, this.#now()));
  }

  /** A line above the bar. */
  line(text: string): void {
    if (this.#quiet) return;
    this.#write(this.#tty && this.#showBar ? `\r\x1b[K${text}\n` : `${text}\n`);
    if (this.#tty && this.#showBar) this.#write(progressBar(this.done, this.total));
  }

  step(): void {
    this.done++;
    this.draw();
  }

  draw(): void {
    if (this.#quiet || !this.#showBar) return;
    this.#write(this.#tty ? `\r${progressBar(this.done, this.total)}` : `${progressBar(this.done, this.total)}\n`);
  }

  finish(): void {
    if (!this.#quiet && this.#showBar && this.#tty) this.#write('\n');
  }
}

/** `key: waiting until 2026-… (in 250 ms): why`. */
export function waitLine(wait: Wait, nowMs: number): string {
  const inMs = Math.max(0, Math.round(wait.until - nowMs));
  const what = wait.kind === 'next_attempt' ? 'next attempt at' : wait.kind === 'held' ? 'held until' : 'leased until';
  return `${wait.key}: ${what} ${formatTime(wait.until)} (in ${inMs} ms): ${wait.reason}`;
}

function hostOf(operation: string): string {
  const url = operation.slice(operation.indexOf(' ') + 1);
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
