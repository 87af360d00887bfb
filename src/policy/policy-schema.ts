/**
 * The schema of policy options (the default policy and each endpoint rule)
 * and their validation: unknown names first (with the oncely name for a
 * ky/retry-library name, or the closest one for a typo), then values, each
 * refusal naming the field and what it accepts.
 */
import { InvalidOptionsError } from '../errors.js';
import { ATTEMPT_CLASSES } from '../model.js';
import type { PolicyOptions } from '../options.js';
import { bool, type Check, dict, either, fn, isObject, list, num, oneOf, optional, shape, str } from './check.js';
import { checkOptionKeys, POLICY_OPTION_HINTS } from './option-keys.js';
import { checkRequestPolicy, requestPolicyChecks } from './request-policy.js';

const MAX_MS = 2 ** 31 - 1;
const posInt = () => num({ int: true, min: 1 });
const nonNegMs = () => num({ min: 0, max: MAX_MS });
const positiveMs = () => num({ min: 1, max: MAX_MS });
const statusMap = dict(/^[1-5]\d\d$/, 'must be an HTTP status code from 100 to 599', oneOf(ATTEMPT_CLASSES));

/** A profile object: its own fields are checked (all required but the last two), others it may carry are left alone. */
const profileShape = shape(
  {
    name: str(),
    keyHeader: str({ pattern: /^[A-Za-z0-9-]+$/, mustBe: 'must be a header name (letters, digits, -)' }),
    maxKeyLength: posInt(),
    keyRetentionMs: positiveMs(),
    statuses: statusMap,
    notApplied: list(num()),
    bodyRules: list(() => {}),
    headerRules: list(() => {}),
    errorFormat: optional(oneOf(['stripe', 'problem-details'])),
    errorOf: optional(fn),
  },
  true,
);

const backoffShape = {
  baseDelayMs: nonNegMs(),
  maxDelayMs: nonNegMs(),
  multiplier: num({ min: 1, max: 100 }),
  jitter: oneOf(['full', 'equal', 'decorrelated', 'none']),
};

const retryAfterShape = {
  honor: bool,
  maxRetryAfterMs: nonNegMs(),
  jitterMs: nonNegMs(),
};

const budgetShape = {
  capacity: num({ min: 0 }),
  ratio: num({ min: 0, max: 1 }),
  probeIntervalMs: positiveMs(),
  rampMs: nonNegMs(),
  per: oneOf(['host', 'endpoint']),
};

const recheckShape = {
  maxChecks: posInt(),
  delayMs: positiveMs(),
  maxDelayMs: positiveMs(),
};

const policyShape: Record<string, Check> = {
  maxAttempts: posInt(),
  attemptTimeoutMs: positiveMs(),
  deadlineMs: positiveMs(),
  keyRetentionMs: positiveMs(),
  retainMs: nonNegMs(),
  backoff: shape(backoffShape),
  retryAfter: shape(retryAfterShape),
  budget: either([
    { accepts: (v) => v === false, say: 'false' },
    { accepts: isObject, check: shape(budgetShape), say: 'an object' },
  ]),
  profile: either([
    { accepts: (v) => v === 'ietf' || v === 'stripe', say: '"ietf" or "stripe"' },
    { accepts: isObject, check: profileShape, say: 'an object' },
  ]),
  classify: statusMap,
  otherStatus: oneOf(ATTEMPT_CLASSES),
  sendKey: bool,
  reconcile: fn,
  recheck: shape(recheckShape),
  providerId: fn,
  ...requestPolicyChecks,
};

const policyCheck = shape(policyShape);

/** The accepted names of a policy and of its nested objects. */
export const POLICY_KEYS = {
  policy: Object.keys(policyShape),
  backoff: Object.keys(backoffShape),
  retryAfter: Object.keys(retryAfterShape),
  budget: Object.keys(budgetShape),
  recheck: Object.keys(recheckShape),
} as const;

/** Validates policy options; throws `InvalidOptionsError` naming `prefix.field`. */
export function validatePolicy(input: unknown, prefix: string): PolicyOptions {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidOptionsError(prefix, `expected an object of policy options (${POLICY_KEYS.policy.join(', ')})`);
  }
  checkOptionKeys(input, POLICY_KEYS.policy, prefix, POLICY_OPTION_HINTS);
  const nested = input as Record<string, unknown>;
  for (const name of ['backoff', 'retryAfter', 'budget', 'recheck'] as const) {
    checkOptionKeys(nested[name], POLICY_KEYS[name], `${prefix}.${name}`);
  }
  policyCheck(input, prefix);
  const options = input as PolicyOptions;
  const base = options.backoff?.baseDelayMs;
  const max = options.backoff?.maxDelayMs;
  if (base !== undefined && max !== undefined && max < base) {
    throw new InvalidOptionsError(`${prefix}.backoff.maxDelayMs`, `must be >= backoff.baseDelayMs (${base})`);
  }
  checkRequestPolicy(options, prefix);
  return options;
}
