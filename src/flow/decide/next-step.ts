/**
 * What follows an attempt that did not simply succeed: its class
 * (classify.ts), the server's hint (`Retry-After`, RateLimit), and retry or
 * stop (`decide`). Loaded with `import()` the first time an attempt needs it
 * (flow/drive/next-step-load.ts): one whose answer is a 2xx without a hint
 * header needs none of it (flow/decide/plain-success.ts), so a page whose sends
 * succeed never downloads it. It imports only types from the modules the
 * client bundles (what it uses of them is handed to it: `DecideKit`), so
 * bundlers give it a chunk of its own and no chunk shared with the client.
 */
import type { OperationRecord } from '../../model.js';
import { backoffDelayMs, hintedDelayMs } from '../../policy/backoff.js';
import type { DecideInput, DecideKit, Decision } from './decide.js';
import { stopWith } from './stop.js';

export { HostGate } from '../../policy/gate.js';
export { parseServerHintMs } from '../../policy/retry-after.js';
export { classify } from './classify.js';

/** @internal The loop's step; callers see its result in events and outcomes. */
export function decide(input: DecideInput, kit: DecideKit): Decision {
  const { record, classification: c, policy, nowMs } = input;
  switch (c.class) {
    case 'completed':
      return { kind: 'succeed' };
    case 'correctable':
      if (c.status === 401 && input.canRefreshAuth) return { kind: 'refresh_auth' };
      return stopWith(kit, record, 'correctable', `The server refused the request: ${c.detail}`, c);
    case 'permanent':
      // A 3xx is no refusal: say what happened (redirected, not followed, may have been applied).
      return stopWith(
        kit,
        record,
        'permanent',
        `${c.redirect ? 'The server redirected the request' : 'The server rejected the request for good'}: ${c.detail}`,
        c,
      );
    case 'not_sent':
    case 'ambiguous':
    case 'retryable':
    case 'in_progress':
      break;
  }
  // Only tries that may have done something count toward maxAttempts: unsent
  // attempts, "still in progress" and "not applied, come back later" answers
  // are bounded by the deadline alone (their waits grow instead).
  if (kit.countsTowardMaxAttempts(c) && attemptsThatCount(record, kit) >= policy.maxAttempts) {
    return stopWith(kit, record, 'attempts', `Gave up after ${policy.maxAttempts} attempts; last: ${c.detail}`, c);
  }
  let delayMs: number;
  const hint = policy.retryAfter.honor ? input.hintMs : undefined;
  if (hint !== undefined) {
    if (hint > policy.retryAfter.maxRetryAfterMs) {
      return stopWith(
        kit,
        record,
        'deadline',
        `The server asked to wait ${hint} ms, more than retryAfter.maxRetryAfterMs (${policy.retryAfter.maxRetryAfterMs})`,
        c,
      );
    }
    const wait = { hintMs: hint, grownMs: notAppliedGrowthMs(record, hint), capMs: hint * NOT_APPLIED_MAX_HINTS };
    delayMs = hintedDelayMs(wait, policy.retryAfter.jitterMs, input.random);
  } else {
    delayMs = backoffDelayMs(policy.backoff, record.backoff.retries, record.backoff.lastDelayMs, input.random);
  }
  // The original request is still running on the server: asking again sooner cannot help.
  const floorMs = c.class === 'in_progress' ? inProgressFloorMs(record) : 0;
  delayMs = Math.max(delayMs, floorMs);
  if (hint !== undefined && nowMs + hint >= record.deadlineAt) {
    return stopWith(kit, record, 'deadline', `The server asked to wait ${hint} ms, past the deadline`, c);
  }
  if (nowMs + delayMs >= record.deadlineAt) {
    // A random delay that overshoots must not cost the last try: wait half of
    // what is left instead, and leave the other half to the attempt — unless
    // that is shorter than a wait worth making.
    const lastChanceMs = Math.floor((record.deadlineAt - nowMs) / 2);
    // After a hint, the last chance is the earliest moment the server allows,
    // if that still leaves the attempt half of the time that is left.
    if (hint !== undefined && hint <= lastChanceMs && hint >= floorMs) {
      return {
        kind: 'retry',
        delayMs: hint,
        budgeted: c.class === 'retryable' || c.class === 'ambiguous',
        why: c.class,
      };
    }
    if (hint !== undefined || lastChanceMs < Math.max(floorMs, policy.backoff.baseDelayMs)) {
      return stopWith(kit, record, 'deadline', `The deadline leaves no time for another attempt; last: ${c.detail}`, c);
    }
    delayMs = lastChanceMs;
  }
  return { kind: 'retry', delayMs, budgeted: c.class === 'retryable' || c.class === 'ambiguous', why: c.class };
}

/**
 * The least wait after a "still in progress" answer (409 of the IETF draft,
 * Stripe's `idempotency_key_in_use`) without `Retry-After`: 1 s, doubling
 * with each such answer in a row, up to 8 s. The ordinary backoff (250 ms
 * base) would spend the whole attempt budget while a slow payment is still
 * being processed.
 */
export function inProgressFloorMs(record: OperationRecord): number {
  let streak = 0;
  for (let i = record.attempts.length - 1; i >= 0 && record.attempts[i]?.class === 'in_progress'; i--) streak++;
  return Math.min(IN_PROGRESS_MAX_FLOOR_MS, IN_PROGRESS_FLOOR_MS * 2 ** Math.max(0, streak - 1));
}

const IN_PROGRESS_FLOOR_MS = 1_000;
const IN_PROGRESS_MAX_FLOOR_MS = 8_000;

/** Attempts that count toward `maxAttempts` (see `countsTowardMaxAttempts`), dropped ones included. */
export function attemptsThatCount(record: OperationRecord, kit: Pick<DecideKit, 'countsTowardMaxAttempts'>): number {
  let counted = record.attemptsOmitted?.counted ?? 0;
  for (const a of record.attempts) if (kit.countsTowardMaxAttempts(a)) counted++;
  return counted;
}

/**
 * The earliest next attempt after a server hint (`Retry-After`): the hint
 * itself the first time; when the host keeps answering "not applied", it
 * doubles with each such answer in a row, up to `NOT_APPLIED_MAX_HINTS`
 * hints. Separate clients (200 browsers) cannot coordinate: growing waits
 * lower the load an outage draws, and the cap keeps the time from recovery
 * to the next try within three of the server's own intervals (the jitter
 * inside them, see `hintedDelayMs`).
 */
export function notAppliedGrowthMs(record: OperationRecord, hintMs: number): number {
  let streak = 0;
  for (let i = record.attempts.length - 1; i >= 0; i--) {
    const a = record.attempts[i];
    if (a === undefined || a.class !== 'retryable' || a.effect !== 'none') break;
    streak++;
  }
  return Math.min(hintMs * 2 ** Math.max(0, streak - 1), hintMs * NOT_APPLIED_MAX_HINTS);
}

const NOT_APPLIED_MAX_HINTS = 3;
