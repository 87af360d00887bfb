/**
 * Prints an operation timeline from the client's events: one line per
 * transition, with the key, the attempt, its class and the chosen delay.
 */
import type { OncelyClient } from 'oncely';

export interface Timeline {
  /** Short labels for keys, e.g. "pay-1". */
  label(key: string, name: string): void;
  print(line: string): void;
}

export function attachTimeline(client: OncelyClient, write: (line: string) => void = console.log): Timeline {
  const started = Date.now();
  const labels = new Map<string, string>();
  const stamp = () => `+${((Date.now() - started) / 1000).toFixed(3)}s`.padStart(9);
  const who = (key: string) => (labels.get(key) ?? key.slice(0, 8)).padEnd(12);
  const print = (line: string) => write(`${stamp()}  ${line}`);

  client.on('enqueued', (e) => print(`${who(e.key)} written ahead   key=${e.key}`));
  client.on('attempt:started', (e) =>
    print(
      `${who(e.key)} attempt ${e.attempt} → sent${e.resendCount > 0 ? ` (resend #${e.resendCount}, same key)` : ''}`,
    ),
  );
  client.on('attempt:ended', (e) =>
    print(
      `${who(e.key)} attempt ${e.attempt} ← ${e.class}${e.status === undefined ? '' : ` ${e.status}`}  (${e.detail})`,
    ),
  );
  client.on('retry:scheduled', (e) =>
    print(
      `${who(e.key)} retry in ${e.delayMs} ms${e.hintMs === undefined ? '' : ` (server asked ${e.hintMs} ms + jitter)`}`,
    ),
  );
  client.on('held', (e) => print(`${who(e.key)} held by the retry budget until +${e.untilMs - Date.now()} ms`));
  client.on('settled', (e) => print(`${who(e.key)} settled: ${e.state.toUpperCase()} after ${e.attempts} attempt(s)`));
  return {
    label: (key, name) => labels.set(key, name),
    print,
  };
}
