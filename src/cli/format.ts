/**
 * Plain-text rendering of operations for the CLI: one line per operation in
 * lists, and an attempt timeline for `show`.
 */

import { mayHaveTakenEffect } from '../flow/decide/decide.js';
import type { OperationRecord, ProviderProfile, QuarantineEntry } from '../index.js';
import { errorResponseOf, providerErrorOf } from '../policy/provider-errors.js';

export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

function relative(ms: number, from: number): string {
  const d = ms - from;
  return `${d >= 0 ? '+' : '-'}${(Math.abs(d) / 1000).toFixed(3)}s`;
}

export function listLine(record: OperationRecord, nowMs: number): string {
  const due =
    record.state === 'pending'
      ? record.nextAttemptAt <= nowMs
        ? 'due now'
        : `next ${relative(record.nextAttemptAt, nowMs)}`
      : (record.failure?.reason ?? '');
  return [
    record.state.padEnd(9),
    record.key.padEnd(38),
    `${record.request.method} ${record.request.url}`.padEnd(48),
    `attempts=${record.attempts.length}`.padEnd(11),
    due,
  ].join(' ');
}

export function quarantineLine(entry: QuarantineEntry): string {
  return `${'corrupt'.padEnd(9)} ${entry.id.padEnd(38)} moved aside ${formatTime(entry.at)}: ${entry.problems.join('; ')}`;
}

/**
 * What happens next to an open operation, in words: when its next attempt
 * goes, or, past its deadline, how it ends (outcome.ts `settlesByReplay`:
 * one last attempt with the same key when an earlier one may have reached
 * the server, so its stored answer tells the truth). Undefined when it is
 * finished.
 */
export function nextStep(record: OperationRecord, nowMs: number): string | undefined {
  if (record.state !== 'pending' && record.state !== 'in_flight') return undefined;
  if (nowMs < record.deadlineAt) {
    if (record.state === 'in_flight') return 'an attempt may be on the wire; its owner settles it';
    const when = record.nextAttemptAt <= nowMs ? 'now' : `in ${relative(record.nextAttemptAt, nowMs).slice(1)}`;
    return `attempt #${record.attempts.length + 1} ${when}, on the next drain or resume, with the same key`;
  }
  if (!mayHaveTakenEffect(record)) {
    return 'past its deadline: the next drain ends it failed without sending (no attempt reached the server)';
  }
  if (record.attempts.some((a) => a.startedAt >= record.deadlineAt)) {
    return 'past its deadline, last attempt made: the next drain ends it unknown — reconcile it by its key';
  }
  return (
    'past its deadline: the next drain makes one last attempt with the same key, so the server replays what it ' +
    'did (within its key retention); without an answer it ends unknown — never resent under a new key'
  );
}

/** The operation and its attempt history as a timeline; `nowMs` says what happens next to an open one. */
export function timeline(record: OperationRecord, nowMs: number): string {
  const lines = [
    `key         ${record.key}`,
    `request     ${record.request.method} ${record.request.url}`,
    `state       ${record.state}${record.failure === undefined ? '' : ` (${record.failure.reason})`}`,
    `policy      ${record.policy}${record.scope === undefined ? '' : `   scope ${record.scope}`}`,
    `fingerprint ${record.fingerprint}`,
    `created     ${formatTime(record.createdAt)}`,
    `deadline    ${formatTime(record.deadlineAt)} (${relative(record.deadlineAt, record.createdAt)})`,
  ];
  if (record.lease !== undefined)
    lines.push(`lease       ${record.lease.owner} until ${formatTime(record.lease.until)}`);
  const next = nextStep(record, nowMs);
  if (next !== undefined) lines.push(`next        ${next}`);
  lines.push('', 'attempts:');
  if (record.attempts.length === 0) lines.push('  (none yet)');
  for (const a of record.attempts) {
    const outcome =
      a.endedAt === undefined
        ? 'in flight (no outcome recorded)'
        : `${a.class ?? '?'}${a.status === undefined ? '' : ` ${a.status}`}${a.error === undefined ? '' : ` — ${a.error}`}`;
    const took = a.endedAt === undefined ? '' : ` in ${a.endedAt - a.startedAt} ms`;
    const next =
      a.delayMs === undefined
        ? ''
        : `, next in ${a.delayMs} ms${a.hintMs === undefined ? '' : ` (server hint ${a.hintMs} ms)`}`;
    lines.push(`  #${a.n} ${relative(a.startedAt, record.createdAt)} sent=${a.sent} ${outcome}${took}${next}`);
  }
  if (record.result !== undefined) {
    lines.push('', `result      ${record.result.status}${record.result.replayed ? ' (replayed by the server)' : ''}`);
  }
  if (record.failure !== undefined) {
    lines.push('', `why         ${record.failure.message}`);
    const answer = record.failure.response;
    if (answer !== undefined) {
      const response = errorResponseOf(answer);
      const body = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
      lines.push(`answer      ${response.status}${answer.truncated === true ? ' (body cut at maxResponseBytes)' : ''}`);
      if (body !== undefined) lines.push(`            ${body.length > 400 ? `${body.slice(0, 400)}…` : body}`);
      const profile = record.policySnapshot?.profile;
      const provider =
        typeof profile === 'object' && profile !== null
          ? providerErrorOf(profile as ProviderProfile, response)
          : undefined;
      if (provider !== undefined) {
        const { profile: by, ...fields } = provider;
        lines.push(
          `provider    ${by}: ${Object.entries(fields)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`,
        );
      }
    }
    lines.push(`next step   ${record.failure.remediation}`);
  }
  return lines.join('\n');
}

/** A one-line progress bar, redrawn in place on a terminal. */
export function progressBar(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}
