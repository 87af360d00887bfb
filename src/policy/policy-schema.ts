/**
 * The schema of policy options (the default policy and each endpoint rule)
 * and their validation: unknown names first (with the oncely name for a
 * ky/retry-library name, or the closest one for a typo), then values, each
 * refusal naming the field and what it accepts.
 */
import * as z from 'zod/mini';
import { InvalidOptionsError } from '../errors.js';
import { ATTEMPT_CLASSES, describeIssue } from '../model.js';
import type { PolicyOptions } from '../options.js';
import { checkOptionKeys, POLICY_OPTION_HINTS } from './option-keys.js';
import { checkRequestPolicy, requestPolicyShape } from './request-policy.js';

const posInt = () => z.number().check(z.int(), z.minimum(1));
const nonNegMs = () => z.number().check(z.minimum(0), z.maximum(2 ** 31 - 1));
const positiveMs = () => z.number().check(z.minimum(1), z.maximum(2 ** 31 - 1));
const statusMap = z.record(
  z.string().check(z.regex(/^[1-5]\d\d$/, { error: 'must be an HTTP status code from 100 to 599' })),
  z.enum(ATTEMPT_CLASSES),
);

const profileShape = z.looseObject({
  name: z.string(),
  keyHeader: z.string().check(z.regex(/^[A-Za-z0-9-]+$/, { error: 'must be a header name (letters, digits, -)' })),
  maxKeyLength: posInt(),
  keyRetentionMs: positiveMs(),
  statuses: statusMap,
  notApplied: z.array(z.number()),
  bodyRules: z.array(z.unknown()),
  headerRules: z.array(z.unknown()),
  errorFormat: z.optional(z.enum(['stripe', 'problem-details'])),
  errorOf: z.optional(z.custom<unknown>((v) => typeof v === 'function', { error: 'must be a function' })),
});

const backoffShape = {
  baseDelayMs: z.optional(nonNegMs()),
  maxDelayMs: z.optional(nonNegMs()),
  multiplier: z.optional(z.number().check(z.minimum(1), z.maximum(100))),
  jitter: z.optional(z.enum(['full', 'equal', 'decorrelated', 'none'])),
};

const retryAfterShape = {
  honor: z.optional(z.boolean()),
  maxRetryAfterMs: z.optional(nonNegMs()),
  jitterMs: z.optional(nonNegMs()),
};

const budgetShape = {
  capacity: z.optional(z.number().check(z.minimum(0))),
  ratio: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
  probeIntervalMs: z.optional(positiveMs()),
  rampMs: z.optional(nonNegMs()),
  per: z.optional(z.enum(['host', 'endpoint'])),
};

const policyShape = {
  maxAttempts: z.optional(posInt()),
  attemptTimeoutMs: z.optional(positiveMs()),
  deadlineMs: z.optional(positiveMs()),
  keyRetentionMs: z.optional(positiveMs()),
  retainMs: z.optional(nonNegMs()),
  backoff: z.optional(z.strictObject(backoffShape)),
  retryAfter: z.optional(z.strictObject(retryAfterShape)),
  budget: z.optional(z.union([z.literal(false), z.strictObject(budgetShape)])),
  profile: z.optional(z.union([z.enum(['ietf', 'stripe']), profileShape])),
  classify: z.optional(statusMap),
  otherStatus: z.optional(z.enum(ATTEMPT_CLASSES)),
  sendKey: z.optional(z.boolean()),
  ...requestPolicyShape,
};

export const policySchema = z.strictObject(policyShape);

/** The accepted names of a policy and of its nested objects. */
export const POLICY_KEYS = {
  policy: Object.keys(policyShape),
  backoff: Object.keys(backoffShape),
  retryAfter: Object.keys(retryAfterShape),
  budget: Object.keys(budgetShape),
} as const;

/** Validates policy options; throws `InvalidOptionsError` naming `prefix.field`. */
export function validatePolicy(input: unknown, prefix: string): PolicyOptions {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidOptionsError(prefix, `expected an object of policy options (${POLICY_KEYS.policy.join(', ')})`);
  }
  checkOptionKeys(input, POLICY_KEYS.policy, prefix, POLICY_OPTION_HINTS);
  const nested = input as Record<string, unknown>;
  for (const name of ['backoff', 'retryAfter', 'budget'] as const) {
    checkOptionKeys(nested[name], POLICY_KEYS[name], `${prefix}.${name}`);
  }
  const parsed = policySchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const text = issue === undefined ? '(root): is not a valid policy' : describeIssue(issue);
    const [field, ...rest] = text.split(': ');
    const path = field === '(root)' ? prefix : `${prefix}.${field}`;
    throw new InvalidOptionsError(path, rest.join(': '));
  }
  const options = input as PolicyOptions;
  const base = options.backoff?.baseDelayMs;
  const max = options.backoff?.maxDelayMs;
  if (base !== undefined && max !== undefined && max < base) {
    throw new InvalidOptionsError(`${prefix}.backoff.maxDelayMs`, `must be >= backoff.baseDelayMs (${base})`);
  }
  checkRequestPolicy(options, prefix);
  return options;
}
