/**
 * The contract's rules as checks against a live endpoint, one each, in the
 * order of the table in docs/server.md. A check returns what it saw; it
 * never throws for a server's answer (a network error fails the check).
 */
import { describeSeen, isProblem, isReplay, reserialised, type Seen, type Sender } from './http.js';
import type { CheckStatus, ServerConformanceOptions } from './types.js';

type Verdict = { status: CheckStatus; detail: string };
export interface Check {
  rule: string;
  title: string;
  run(s: Sender, o: ServerConformanceOptions): Promise<Verdict>;
}

const pass = (detail: string): Verdict => ({ status: 'pass', detail });
const fail = (detail: string): Verdict => ({ status: 'fail', detail });
const skip = (detail: string): Verdict => ({ status: 'skipped', detail });

/** One operation: a fresh key and body, sent once; returns what a repeat needs. */
async function first(s: Sender, rule: string, headers?: Record<string, string>) {
  const key = s.freshKey(rule);
  const body = s.nextBody();
  const seen = await s.send({ key, body: JSON.stringify(body), ...(headers === undefined ? {} : { headers }) });
  return { key, body, seen };
}

/**
 * Sends the stall body under a fresh key (its request never answers, and is
 * left hanging) and repeats it until the server says 409: the claim is held.
 * A repeat may overtake the first and stall in its place: each gives up
 * after a second, and the next one meets whichever holds the claim.
 */
async function inProgress(s: Sender, body: string): Promise<{ key: string; seen: Seen } | undefined> {
  const key = s.freshKey('stall');
  void s.send({ key, body }).catch(() => undefined);
  for (let i = 0; i < 20; i++) {
    const seen = await s.send({ key, body, timeoutMs: 1_000 }).catch(() => undefined);
    if (seen?.status === 409) return { key, seen };
  }
  return undefined;
}

const problemType = (seen: Seen) => (seen.json as { type?: unknown } | undefined)?.type;

function sameAnswer(a: Seen, b: Seen): string | undefined {
  if (a.status !== b.status) return `status ${b.status}, first ${a.status}`;
  if (a.text !== b.text) return 'another body than the first answer';
  for (const name of ['content-type', 'location']) {
    if (a.headers.get(name) !== b.headers.get(name))
      return `${name} ${b.headers.get(name)}, first ${a.headers.get(name)}`;
  }
  return undefined;
}

export const CHECKS: readonly Check[] = [
  {
    rule: 'key-missing',
    title: 'a request without a key → 400 problem+json',
    async run(s) {
      const seen = await s.send({ body: JSON.stringify(s.nextBody()) });
      return seen.status === 400 && isProblem(seen)
        ? pass(describeSeen(seen))
        : fail(`${describeSeen(seen)}; expected 400 problem+json`);
    },
  },
  {
    rule: 'key-invalid',
    title: 'a key over the length limit or a broken sf-string → 400',
    async run(s, o) {
      const long = 'k'.repeat((o.maxKeyLength ?? 255) + 1);
      for (const key of [long, `"${s.freshKey('unterminated')}`]) {
        const seen = await s.send({ key, body: JSON.stringify(s.nextBody()) });
        const shown = key === long ? `a ${long.length}-character key` : 'an unterminated sf-string';
        if (seen.status !== 400) return fail(`${shown}: ${describeSeen(seen)}; expected 400`);
      }
      return pass('both refused with 400');
    },
  },
  {
    rule: 'key-forms',
    title: 'the sf-string "k" and the bare k name one key',
    async run(s) {
      const key = s.freshKey('forms');
      const body = JSON.stringify(s.nextBody());
      const quoted = await s.send({ key: `"${key}"`, body });
      const bare = await s.send({ key, body });
      if (quoted.status >= 300) return fail(`the sf-string form: ${describeSeen(quoted)}`);
      return isReplay(bare)
        ? pass('the bare form replayed the sf-string one')
        : fail(`the bare form: ${describeSeen(bare)}; expected a replay`);
    },
  },
  {
    rule: 'replay',
    title: 'a repeat gets the stored status, headers and body, with Idempotent-Replayed: true exposed',
    async run(s) {
      const op = await first(s, 'replay');
      const again = await s.send({ key: op.key, body: JSON.stringify(op.body) });
      const differs = sameAnswer(op.seen, again);
      if (differs !== undefined) return fail(`the repeat: ${differs}`);
      if (!isReplay(again)) return fail('the repeat has no Idempotent-Replayed: true');
      const exposed = (again.headers.get('access-control-expose-headers') ?? '').toLowerCase();
      if (!exposed.includes('idempotent-replayed') && exposed.trim() !== '*') {
        return fail('Idempotent-Replayed is not in Access-Control-Expose-Headers (page code cannot read it)');
      }
      return pass(`replayed ${describeSeen(again)}`);
    },
  },
  {
    rule: 'fingerprint-canonical',
    title: 'the same JSON with another key order and whitespace is a replay, not a 422',
    async run(s) {
      const op = await first(s, 'canonical');
      const again = await s.send({ key: op.key, body: reserialised(op.body) });
      return isReplay(again) && again.status === op.seen.status
        ? pass('replayed')
        : fail(`${describeSeen(again)}; expected the replay of status ${op.seen.status}`);
    },
  },
  {
    rule: 'fingerprint-mismatch',
    title: 'the key with another body → 422 problem+json',
    async run(s) {
      const op = await first(s, 'mismatch');
      const other = await s.send({ key: op.key, body: JSON.stringify(s.nextBody()) });
      return other.status === 422 && isProblem(other)
        ? pass(describeSeen(other))
        : fail(`${describeSeen(other)}; expected 422 problem+json`);
    },
  },
  {
    rule: 'scope',
    title: "a second caller's same key never gets the first caller's answer",
    async run(s, o) {
      if (o.otherCaller === undefined) return skip('give `otherCaller` (headers of a second caller) to run it');
      const op = await first(s, 'scope');
      const theirs = await s.send({ key: op.key, body: JSON.stringify(op.body), headers: o.otherCaller });
      if (isReplay(theirs) || (theirs.status === op.seen.status && theirs.text === op.seen.text)) {
        return fail(`the second caller got the first caller's answer (${describeSeen(theirs)})`);
      }
      return pass(`the second caller: ${describeSeen(theirs)}`);
    },
  },
  {
    rule: 'atomic-claim',
    title: 'concurrent duplicates → one fresh answer; while one runs, the others 409 with Retry-After',
    async run(s, o) {
      const key = s.freshKey('race');
      const body = JSON.stringify(s.nextBody());
      const before = await o.effects?.();
      const all = await Promise.all(Array.from({ length: o.concurrency ?? 10 }, () => s.send({ key, body })));
      const fresh = all.filter((a) => !isReplay(a) && a.status < 300);
      if (fresh.length !== 1) return fail(`${fresh.length} fresh answers to ${all.length} duplicates`);
      if (before !== undefined) {
        const after = (await o.effects?.()) ?? before;
        if (after - before !== 1) return fail(`${after - before} effects for one key`);
      }
      const burst = `${all.length} duplicates at once: 1 fresh answer`;
      // A duplicate of a request that is still running, for certain: one that never ends.
      if (o.stall === undefined) return pass(`${burst} (give \`stall\` to check the 409 of a running request)`);
      const running = await inProgress(s, JSON.stringify(o.stall.body));
      if (running === undefined) return fail(`${burst}; a stalled request never answered its duplicates with 409`);
      return running.seen.headers.has('retry-after')
        ? pass(`${burst}; a duplicate of a running request: ${describeSeen(running.seen)}`)
        : fail(`a duplicate of a running request: ${describeSeen(running.seen)}; expected a Retry-After`);
    },
  },
  {
    rule: 'outcome-unknown',
    title: 'a claim whose lease ran out without an outcome is never re-run blindly, nor "in progress" forever',
    async run(s, o) {
      if (o.stall === undefined || o.advanceTime === undefined) return skip('give `stall` and `advanceTime` to run it');
      const body = JSON.stringify(o.stall.body);
      const running = await inProgress(s, body);
      if (running === undefined) return fail('the stalled request never showed as in progress (409)');
      await o.advanceTime(o.stall.leaseMs);
      const after = await s.send({ key: running.key, body });
      if (after.status < 300) return fail(`after the lease: ${describeSeen(after)}: the request ran again blindly`);
      if (after.status === running.seen.status && problemType(after) === problemType(running.seen)) {
        return fail(`after the lease: ${describeSeen(after)}, still "in progress": a client told to wait for ever`);
      }
      return pass(`after the lease: ${describeSeen(after)}`);
    },
  },
  {
    rule: 'retention',
    title: 'a key reused after retention is a new operation',
    async run(s, o) {
      if (o.advanceTime === undefined || o.retentionMs === undefined)
        return skip('give `advanceTime` and `retentionMs` to run it');
      const op = await first(s, 'retention');
      await o.advanceTime(o.retentionMs);
      const later = await s.send({ key: op.key, body: JSON.stringify(s.nextBody()) });
      return !isReplay(later) && later.status < 300
        ? pass(`a new operation: ${describeSeen(later)}`)
        : fail(`${describeSeen(later)}; expected a fresh answer`);
    },
  },
];
