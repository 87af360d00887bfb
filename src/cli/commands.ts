/**
 * The CLI commands on an open client. Each prints its result on stdout (as
 * JSON with `--json`) and returns the exit code: 0 done, 1 an operation did
 * not succeed or was not found.
 */
import { summaries } from '../flow/calls/resume.js';
import { mayHaveTakenEffect } from '../flow/decide/decide.js';
import type { OncelyClient, Outcome } from '../index.js';
import { OPERATION_STATES, type OperationState, writeOrder } from '../model.js';
import type { OperationStore } from '../store/store.js';
import { UsageError } from './args.js';
import { listLine, quarantineLine, timeline } from './format.js';
import { Progress } from './progress.js';

export interface CommandContext {
  client: OncelyClient;
  store: OperationStore;
  /** This client's owner id: leases of any other id are another owner's. */
  owner: string;
  json: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
  tty: boolean;
}

export async function list(ctx: CommandContext, state: string | undefined): Promise<number> {
  const { client, json, out } = ctx;
  if (state === 'quarantined') {
    const entries = await client.quarantined();
    if (json) out(JSON.stringify(entries, null, 2));
    else for (const entry of entries) out(quarantineLine(entry));
    return 0;
  }
  if (state !== undefined && !OPERATION_STATES.includes(state as OperationState)) {
    throw new UsageError(`unknown state "${state}" (one of ${OPERATION_STATES.join(', ')}, quarantined)`);
  }
  const listed = await client.list(state === undefined ? {} : { state: state as OperationState });
  // In the order they were written (the store lists by due time): what a reader of a queue expects.
  const records = listed.sort((a, b) => writeOrder(a) - writeOrder(b));
  if (json) {
    out(JSON.stringify(records, null, 2));
    return 0;
  }
  const quarantined = await client.quarantined();
  const now = Date.now();
  for (const record of records) out(listLine(record, now));
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.state, (counts.get(r.state) ?? 0) + 1);
  const summary = [...counts].map(([s, n]) => `${n} ${s}`).join(', ') || 'no operations';
  const corrupt =
    quarantined.length > 0 ? `; ${quarantined.length} corrupt record(s) quarantined (list --state quarantined)` : '';
  out(`\n${summary}${corrupt}`);
  return 0;
}

export async function show(ctx: CommandContext, key: string): Promise<number> {
  const record = await ctx.client.get(key);
  if (record === undefined) {
    const corrupt = (await ctx.client.quarantined()).find((q) => q.id === key);
    const message = corrupt === undefined ? `no operation with key ${key}` : quarantineLine(corrupt);
    ctx.err(`${ctx.json ? JSON.stringify({ error: { code: 'not_found', message } }) : `oncely: ${message}`}\n`);
    return 1;
  }
  ctx.out(ctx.json ? JSON.stringify(record, null, 2) : timeline(record, Date.now()));
  return 0;
}

export async function retry(ctx: CommandContext, key: string): Promise<number> {
  const progress = new Progress({ write: ctx.err, tty: ctx.tty, quiet: ctx.json, bar: false });
  const detach = progress.attach(ctx.client);
  let outcome: Outcome;
  try {
    outcome = await ctx.client.retry(key);
  } finally {
    detach();
  }
  if (ctx.json) ctx.out(JSON.stringify({ ...outcomeJson(outcome), waits: progress.waits }, null, 2));
  else ctx.out(`${outcome.key}: ${outcome.state}${outcome.ok ? '' : ` — ${outcome.error?.message ?? ''}`}`);
  return outcome.ok ? 0 : 1;
}

/**
 * Forgets an operation. One that may have taken effect is refused unless
 * `force` (the caller reconciled it at the server): the library's refusal
 * names its own API, so the CLI says it in its own words, and a forced
 * discard says once more what the server may hold.
 */
export async function discard(ctx: CommandContext, key: string, force: boolean): Promise<number> {
  const record = await ctx.client.get(key);
  const mayHave = record !== undefined && record.state !== 'succeeded' && mayHaveTakenEffect(record);
  if (mayHave && !force) {
    const message =
      `operation ${key} (${record.state}) may have taken effect at the server: reconcile it there by its key, ` +
      `then run "oncely discard ${key} --force" — or "oncely retry ${key}" to resend it with the same key`;
    ctx.err(`${ctx.json ? JSON.stringify({ error: { code: 'invalid_state', message } }) : `oncely: ${message}`}\n`);
    return 1;
  }
  await ctx.client.discard(key, { force });
  if (ctx.json) ctx.out(JSON.stringify({ key, discarded: true, mayHaveTakenEffect: mayHave }));
  else if (mayHave) {
    const reached = record.attempts.filter((a) => a.sent !== 'not').length;
    ctx.out(
      `${key}: discarded (forced). It may have taken effect: ${reached} attempt(s) may have reached the server ` +
        `under key ${key}. Sending it again as a new operation is a second effect unless the server shows none.`,
    );
  } else ctx.out(`${key}: discarded`);
  return 0;
}

export async function purge(ctx: CommandContext): Promise<number> {
  const removed = await ctx.client.sweep();
  ctx.out(ctx.json ? JSON.stringify({ removed }) : `removed ${removed} expired operation(s)`);
  return 0;
}

export interface DrainOptions {
  /** One pass: operations held by other owners are left to them, not waited for. */
  once: boolean;
  /** Stop after this long: the client closes, giving back every lease it holds. */
  timeoutMs: number | undefined;
}

/**
 * Resumes every open operation, under the policy stored in each record,
 * taking over those whose owner's lease expires (unless `once`). Says what
 * it waits for. Stopped by `timeoutMs` (or a signal, main.ts), it closes the
 * client, which gives the leases back: the operations stay open for the next
 * drain, not held for a lease's length by a process that is gone.
 */
export async function drain(ctx: CommandContext, options: DrainOptions): Promise<number> {
  const { client, json } = ctx;
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          void client.close();
        }, options.timeoutMs);
  // Counted from summaries: whole records of 100k pending operations would all be held at once just to count them.
  const open = await summaries(ctx.store, { state: ['pending', 'in_flight'] });
  const progress = new Progress({ write: ctx.err, tty: ctx.tty, quiet: json, bar: true });
  progress.total = open.length;
  progress.draw();
  await progress.announce(open, ctx.owner, (key) => client.get(key));
  const detach = progress.attach(client);
  // Only failures are kept (printed after the bar), not every outcome.
  const failures: Outcome[] = [];
  let summary: Awaited<ReturnType<OncelyClient['resume']>>;
  try {
    summary = await client.resume({
      waitForLeases: !options.once,
      onOutcome: (o) => {
        if (!o.ok) failures.push(o);
        progress.step();
      },
    });
  } finally {
    clearTimeout(timer);
    detach();
    progress.finish();
  }
  const notSucceeded = summary.driven - summary.succeeded;
  if (json) {
    const report = { ...summary, timedOut, failures: failures.map(outcomeJson), waits: progress.waits };
    ctx.out(JSON.stringify(report, null, 2));
  } else {
    ctx.out(`drained ${summary.driven} operation(s): ${summary.succeeded} succeeded, ${notSucceeded} not`);
    for (const o of failures) {
      ctx.out(`  ${o.key}: ${o.state} — ${o.error?.message ?? ''}`);
      const next = (o.error as { remediation?: unknown } | undefined)?.remediation;
      if (typeof next === 'string') ctx.out(`    next step: ${next}${ruleHint(o)}`);
    }
    if (timedOut) ctx.out(`  stopped after --timeout; the leases this process held are given back`);
    if (summary.unfinished > 0)
      ctx.out(`  ${summary.unfinished} still open: see the lines above, then run drain again`);
  }
  return notSucceeded === 0 && failures.length === 0 ? 0 : 1;
}

/** A record stored without its policy names a rule this CLI lacks: the app's rules come with --config. */
function ruleHint(outcome: Outcome): string {
  return /endpoint rule ".*", which this client does not have/.test(outcome.error?.message ?? '')
    ? " Here: pass the app's endpoint rules with --config rules.json."
    : '';
}

/** An outcome as plain JSON: the error's code, message and next step, not its stack. */
export function outcomeJson(outcome: Outcome): Record<string, unknown> {
  const error = outcome.error as (Error & Record<string, unknown>) | undefined;
  return {
    key: outcome.key,
    state: outcome.state,
    ok: outcome.ok,
    ...(outcome.result === undefined ? {} : { status: outcome.result.status }),
    ...(error === undefined
      ? {}
      : {
          error: {
            name: error.name,
            code: error.code,
            message: error.message,
            reason: error.reason,
            status: error.status,
            remediation: error.remediation,
          },
        }),
  };
}
