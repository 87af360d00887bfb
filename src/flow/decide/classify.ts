/**
 * Classification of one attempt: pure, table-driven, fixed precedence.
 *
 * Precedence for an HTTP answer (first match wins):
 *   1. the endpoint's own `classify` overrides (status → class)
 *   2. the profile's header rules (e.g. `Stripe-Should-Retry`)
 *   3. the profile's body rules (e.g. Stripe `idempotency_key_in_use`)
 *   4. 2xx → `completed`
 *   5. the profile's status table (the design's base table by default)
 *   6. the endpoint's `otherStatus` (default `permanent`)
 * Two facts come before all of these, as no rule can change them:
 *   - a 3xx is a redirect, never followed: the first hop may have applied
 *     the request, so it is final with an unknown effect (`permanent`,
 *     ending `unknown`), with its status and Location in the detail where the
 *     `fetch` shows them (not a browser's, nor Node's own: flow/transport/transport.ts);
 *   - a retryable answer marked as a replay (`Idempotent-Replayed: true` or
 *     the profile's marker) is the outcome the server stored for this key:
 *     resending the key can only replay it, so it is final (`permanent`),
 *     with the effect its status tells (503/429: none; 500/502/504: unknown).
 * Without an HTTP answer: `not_sent` when the request provably never left
 * (refused, DNS, offline, a request `fetch` refused to build), else
 * `ambiguous` (timeout, reset after writing).
 */

import type { AttemptClass, EffectStatus, SentStatus } from '../../model.js';
import type { ProviderProfile } from '../../policy/profiles.js';

/** What one attempt observed, before any interpretation. */
export type Observation =
  | {
      kind: 'response';
      status: number;
      header: (name: string) => string | null;
      /** Body text as received (for body rules); only the first `bodyTruncatedAtBytes` when set. */
      text: string;
      /** The body was longer than the endpoint's `maxResponseBytes` (this many) and was not read further. */
      bodyTruncatedAtBytes?: number;
    }
  | {
      /**
       * A 3xx, not followed. `status` and `location` are `undefined` when the
       * platform hides them (a browser's `opaqueredirect`, Node's own `fetch`
       * refusing it under `redirect: 'error'`); `followed` when the `fetch` in
       * use followed it although told not to.
       */
      kind: 'redirect';
      status: number | undefined;
      location: string | undefined;
      followed?: boolean;
    }
  | {
      /** The transport failed. `sent: 'not'` only when the request provably never left. */
      kind: 'transport_error';
      sent: 'not' | 'maybe';
      code: string | undefined;
      message: string;
    }
  | { kind: 'timeout'; afterMs: number }
  | { kind: 'aborted'; sent: 'not' | 'maybe' };

export interface ClassifyRules {
  profile: ProviderProfile;
  /** Endpoint overrides, status → class. */
  overrides: Readonly<Record<number, AttemptClass>>;
  /** Class of any status no rule names. */
  otherStatus: AttemptClass;
}

export interface Classification {
  class: AttemptClass;
  sent: SentStatus;
  effect: EffectStatus;
  status?: number;
  /** Human-readable why, for records and events. */
  detail: string;
  /** A 3xx not followed: an answer, not a refusal (the stop message says so). */
  redirect?: true;
}

/** @internal The loop's step; callers set its rules through `PolicyOptions` (`classify`, `profile`). */
export function classify(observation: Observation, rules: ClassifyRules): Classification {
  switch (observation.kind) {
    case 'transport_error':
      return observation.sent === 'not'
        ? { class: 'not_sent', sent: 'not', effect: 'none', detail: observation.message }
        : { class: 'ambiguous', sent: 'maybe', effect: 'unknown', detail: observation.message };
    case 'timeout':
      return {
        class: 'ambiguous',
        sent: 'maybe',
        effect: 'unknown',
        detail: `no answer within ${observation.afterMs} ms`,
      };
    case 'aborted':
      return observation.sent === 'not'
        ? { class: 'not_sent', sent: 'not', effect: 'none', detail: 'aborted before sending' }
        : { class: 'ambiguous', sent: 'maybe', effect: 'unknown', detail: 'aborted while in flight' };
    case 'redirect':
      return classifyRedirect(observation);
    case 'response':
      return classifyResponse(observation, rules);
  }
}

function classifyRedirect(redirect: Extract<Observation, { kind: 'redirect' }>): Classification {
  const { status, location } = redirect;
  const what =
    status === undefined ? 'a redirect (its status and Location hidden by the fetch in use)' : `status ${status}`;
  const to = location === undefined ? '' : ` to ${location}`;
  const how = redirect.followed === true ? 'followed by the fetch in use' : 'not followed';
  const c: Classification = {
    class: 'permanent',
    sent: 'definitely',
    effect: 'unknown',
    detail: `${what}${to}, ${how}: the request may have been applied`,
    redirect: true,
  };
  if (status !== undefined) c.status = status;
  return c;
}

function classifyResponse(response: Extract<Observation, { kind: 'response' }>, rules: ClassifyRules): Classification {
  const { status, header } = response;
  if (status >= 300 && status < 400) {
    return classifyRedirect({ kind: 'redirect', status, location: header('location') ?? undefined });
  }
  let [cls, detail, effect] = responseClass(response, rules);
  const replay = cls === 'retryable' ? replayMarker(response, rules.profile) : undefined;
  if (replay !== undefined) {
    cls = 'permanent';
    detail = `${detail}, replayed (${replay}: true): the server stored this outcome for the key, so resending it gets the same answer`;
  }
  if (response.bodyTruncatedAtBytes !== undefined) {
    detail = `${detail}; body over maxResponseBytes (${response.bodyTruncatedAtBytes}), not kept`;
  }
  return { class: cls, sent: 'definitely', effect: effect ?? effectOf(cls, status, rules.profile), status, detail };
}

/** The header that marks the answer as a replay, if one does. */
function replayMarker(
  response: Extract<Observation, { kind: 'response' }>,
  profile: ProviderProfile,
): string | undefined {
  for (const name of [profile.replayedHeader, 'Idempotent-Replayed']) {
    if (name !== undefined && response.header(name)?.trim().toLowerCase() === 'true') return name;
  }
  return undefined;
}

function responseClass(
  response: Extract<Observation, { kind: 'response' }>,
  rules: ClassifyRules,
): [AttemptClass, string, (EffectStatus | undefined)?] {
  const { status } = response;
  const override = rules.overrides[status];
  if (override !== undefined) return [override, `status ${status} (endpoint override)`];
  if (status < 200 || status >= 300) {
    for (const rule of rules.profile.headerRules) {
      if (response.header(rule.header)?.trim().toLowerCase() === rule.equals) {
        return [rule.class, `${rule.note} (${rule.header}: ${rule.equals})`];
      }
    }
    for (const rule of rules.profile.bodyRules) {
      if (rule.status.includes(status) && bodyMatches(response.text, rule)) {
        return [rule.class, `status ${status}: ${rule.note}`, rule.effect];
      }
    }
  }
  if (status >= 200 && status < 300) return ['completed', `status ${status}`];
  const tabled = rules.profile.statuses[status];
  if (tabled !== undefined) return [tabled, `status ${status}`];
  return [rules.otherStatus, `status ${status} (no rule; endpoint default)`];
}

function bodyMatches(text: string, rule: { path?: readonly string[]; equals?: string; contains?: string }): boolean {
  if (rule.contains !== undefined) return text.toLowerCase().includes(rule.contains.toLowerCase());
  if (rule.path === undefined || rule.equals === undefined) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  for (const segment of rule.path) {
    if (typeof value !== 'object' || value === null) return false;
    value = (value as Record<string, unknown>)[segment];
  }
  return value === rule.equals;
}

/**
 * What an answer tells about the effect: 2xx applied it; a status the
 * profile lists as "not applied" (408/425/429/503) and any 4xx refusal did
 * not; an in-progress answer and the remaining 5xx (500/502/504: a gateway
 * may have given up while the upstream kept working) leave it unknown.
 */
export function effectOf(cls: AttemptClass, status: number, profile: ProviderProfile): EffectStatus {
  if (cls === 'completed') return 'applied';
  if (cls === 'in_progress') return 'unknown';
  if (profile.notApplied.includes(status)) return 'none';
  return status >= 500 ? 'unknown' : 'none';
}
