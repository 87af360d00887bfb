/**
 * Public options in three parts: what callers write (everything optional,
 * documented with `@default`), the defaults, and the resolved form the
 * engine reads. Checked at construction (policy/check.ts): a bad value throws
 * `InvalidOptionsError` naming the field, before anything is sent or stored.
 */
import { InvalidOptionsError } from './errors.js';
import type { AttemptClass } from './model.js';
import type { BackoffSettings, JitterKind } from './policy/backoff.js';
import { type EndpointPattern, parseEndpointPattern, selectEndpoint } from './policy/endpoints.js';
import type { GateSettings } from './policy/gate.js';
import { validatePolicy } from './policy/policy-schema.js';
import { builtInProfiles, type ProviderProfile } from './policy/profiles.js';
import type { ProviderAnswer, RecheckSettings, ReconcileHook } from './policy/reconcile.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  type RequestPolicy,
  type RequestPolicyOptions,
  resolveRequestPolicy,
} from './policy/request-policy.js';

export { checkClientOptionKeys, checkOptionKeys } from './policy/option-keys.js';
export { POLICY_KEYS, validatePolicy } from './policy/policy-schema.js';

/** Retry policy of one endpoint (or the default). All fields optional. */
export interface PolicyOptions extends RequestPolicyOptions {
  /**
   * Attempts that may reach the server, first one included. Attempts that
   * were provably never sent (offline, connection refused) do not count.
   * @default 5
   * @example { maxAttempts: 8 }
   */
  maxAttempts?: number;
  /**
   * Time one attempt may take before it is abandoned. An abandoned attempt
   * may still have reached the server, so it is retried only with the same key.
   * @default 10_000
   */
  attemptTimeoutMs?: number;
  /**
   * Overall time from the first `send` until oncely gives up. Never longer
   * than `keyRetentionMs`: past that the server may have forgotten the key.
   * @default 60_000
   * @example { deadlineMs: 10 * 60_000 } // an offline-tolerant outbox
   */
  deadlineMs?: number;
  /**
   * How long the server remembers an idempotency key.
   * @default the profile's (24 h for `ietf` and `stripe`)
   */
  keyRetentionMs?: number;
  /**
   * How long a finished operation is kept locally for replay and diagnostics.
   * @default keyRetentionMs
   */
  retainMs?: number;
  /** Exponential backoff between retries. */
  backoff?: {
    /** @default 250 */
    baseDelayMs?: number;
    /** @default 30_000 */
    maxDelayMs?: number;
    /** @default 2 */
    multiplier?: number;
    /**
     * `full` spreads clients best; `none` is lockstep.
     * @default 'full'
     */
    jitter?: JitterKind;
  };
  /** Server hints: `Retry-After`, `RateLimit-Reset`, `RateLimit`. */
  retryAfter?: {
    /** @default true */
    honor?: boolean;
    /**
     * A hint longer than this stops the operation instead of waiting (the
     * server is never second-guessed with an earlier retry).
     * @default 60_000
     */
    maxRetryAfterMs?: number;
    /**
     * Random spread added on top of a hint, so clients told the same
     * `Retry-After` do not return in one wave. Once the wait has grown to
     * its cap (three hints, after "not applied" answers in a row) the spread
     * is taken off the cap instead of added to it: never more than three
     * hints between tries.
     * @default 1_000
     * @example { retryAfter: { jitterMs: 500 } }
     */
    jitterMs?: number;
  };
  /**
   * Retry budget and outage gate, per host (or per endpoint). `false`
   * disables both (not recommended: retries then amplify an outage).
   */
  budget?: false | BudgetOptions;
  /**
   * Provider profile: how the API speaks idempotency.
   * @default 'ietf'
   * @example { profile: 'stripe' }
   */
  profile?: 'ietf' | 'stripe' | ProviderProfile;
  /**
   * Status → class overrides for this endpoint, over the profile.
   * @example { classify: { 409: 'permanent' } }
   */
  classify?: Readonly<Record<number, AttemptClass>>;
  /**
   * Class of a status no rule names.
   * @default 'permanent'
   */
  otherStatus?: AttemptClass;
  /**
   * Send the idempotency key header. Turn off for reads (`GET`), which are
   * safe to repeat without one.
   * @default true, except for GET, HEAD and OPTIONS
   */
  sendKey?: boolean;
  /**
   * Finds out what became of an operation that would end `unknown` (it may
   * have taken effect): called then, on `client.reconcile(key)`, and for
   * each recheck `resume()` finds due. Answer `{ applied: true, result? }`
   * (settles `succeeded`, the result flagged `reconciled`), `{ applied: false }`
   * (settles `failed`, reason `not_applied`: only when the provider is sure,
   * since the app may then send it again as a new operation) or
   * `{ applied: 'unknown' }` (a recheck is scheduled, see `recheck`). A throw
   * counts as `'unknown'` and is reported. Not stored: a process that resumes
   * the operation uses its own rule of the same name. See docs/reconcile.md.
   * @default none (an `unknown` operation waits for `retry`, `reconcile` or `settle`)
   * @example { reconcile: async ({ reference }) => ((await ledger.find(reference)) ? { applied: true } : { applied: 'unknown' }) }
   */
  reconcile?: ReconcileHook;
  /** Rechecks after the hook answered `'unknown'` (or threw): bounded, on the client's clock. */
  recheck?: {
    /** Checks in all, the first included. @default 5 */
    maxChecks?: number;
    /** Wait before the second check, doubled for each one after. @default 60_000 */
    delayMs?: number;
    /** @default 3_600_000 (1 hour: a provider's search may lag that long) */
    maxDelayMs?: number;
  };
  /**
   * Reads the provider's id for the operation from any answer to it (kept
   * on the attempt as `providerId`, given to `reconcile` as `providerIds`).
   * @default the string `id` of a non-2xx JSON answer (a 2xx is kept whole as the result)
   * @example { providerId: (a) => (a.data as { payment_intent?: { id?: string } })?.payment_intent?.id }
   */
  providerId?: (answer: ProviderAnswer) => string | undefined;
}

export interface BudgetOptions {
  /**
   * Retry tokens a host starts with and can hold at most.
   * @default 10
   */
  capacity?: number;
  /**
   * Tokens each first attempt adds: retries may add at most this ratio of
   * the first-attempt traffic once the initial tokens are spent.
   * @default 0.1
   */
  ratio?: number;
  /**
   * While a host is failing, one probe retry is let through per interval
   * (never before its `Retry-After`); the others are held. A host that
   * refuses connections is probed every 0.5–0.6 intervals.
   * @default 1_000
   */
  probeIntervalMs?: number;
  /**
   * After a successful probe, held operations are released by a slow start
   * (a few at once, then twice as many every `rampMs / 20` while half of
   * those released succeed), and never slower than spread over this time.
   * @default 500
   */
  rampMs?: number;
  /**
   * Share one budget per host, or one per endpoint policy on each host.
   * @default 'host'
   */
  per?: 'host' | 'endpoint';
}

export interface ResolvedPolicy extends RequestPolicy {
  name: string;
  maxAttempts: number;
  attemptTimeoutMs: number;
  deadlineMs: number;
  keyRetentionMs: number;
  retainMs: number;
  backoff: BackoffSettings;
  retryAfter: { honor: boolean; maxRetryAfterMs: number; jitterMs: number };
  budget: (GateSettings & { per: 'host' | 'endpoint' }) | undefined;
  profile: ProviderProfile;
  classify: Readonly<Record<number, AttemptClass>>;
  otherStatus: AttemptClass;
  sendKey: boolean | undefined;
  /** Functions are not stored with a record (see flow/decide/policy-snapshot.ts): read them from the live rule. */
  reconcile: ReconcileHook | undefined;
  recheck: RecheckSettings;
  providerId: ((answer: ProviderAnswer) => string | undefined) | undefined;
}

/** @internal docs/options.md documents these; `client.policyFor()` shows them resolved. */
export const DEFAULT_POLICY = {
  maxAttempts: 5,
  attemptTimeoutMs: 10_000,
  deadlineMs: 60_000,
  backoff: { baseDelayMs: 250, maxDelayMs: 30_000, multiplier: 2, jitter: 'full' as JitterKind },
  retryAfter: { honor: true, maxRetryAfterMs: 60_000, jitterMs: 1_000 },
  budget: { capacity: 10, ratio: 0.1, probeIntervalMs: 1_000, rampMs: 500, per: 'host' as const },
  otherStatus: 'permanent' as AttemptClass,
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
  recheck: { maxChecks: 5, delayMs: 60_000, maxDelayMs: 3_600_000 },
} as const;

/** Merges endpoint options over the default options over built-in defaults. */
export function resolvePolicy(name: string, defaults: PolicyOptions, endpoint: PolicyOptions): ResolvedPolicy {
  const pick = <K extends keyof PolicyOptions>(key: K): PolicyOptions[K] => endpoint[key] ?? defaults[key];
  const profileOption = pick('profile') ?? 'ietf';
  const profile = typeof profileOption === 'string' ? builtInProfiles[profileOption] : profileOption;
  if (profile === undefined) throw new InvalidOptionsError(`${name}.profile`, 'unknown profile');
  const keyRetentionMs = pick('keyRetentionMs') ?? profile.keyRetentionMs;
  const budgetOption = endpoint.budget ?? defaults.budget;
  return {
    name,
    maxAttempts: pick('maxAttempts') ?? DEFAULT_POLICY.maxAttempts,
    attemptTimeoutMs: pick('attemptTimeoutMs') ?? DEFAULT_POLICY.attemptTimeoutMs,
    // A retry after the server forgot the key would be new work: cap the deadline.
    deadlineMs: Math.min(pick('deadlineMs') ?? DEFAULT_POLICY.deadlineMs, keyRetentionMs),
    keyRetentionMs,
    retainMs: pick('retainMs') ?? keyRetentionMs,
    backoff: { ...DEFAULT_POLICY.backoff, ...defaults.backoff, ...endpoint.backoff },
    retryAfter: { ...DEFAULT_POLICY.retryAfter, ...defaults.retryAfter, ...endpoint.retryAfter },
    budget:
      budgetOption === false
        ? undefined
        : {
            ...DEFAULT_POLICY.budget,
            ...(defaults.budget === false ? {} : defaults.budget),
            ...(endpoint.budget === false ? {} : endpoint.budget),
          },
    profile,
    classify: { ...defaults.classify, ...endpoint.classify },
    otherStatus: pick('otherStatus') ?? DEFAULT_POLICY.otherStatus,
    sendKey: pick('sendKey'),
    reconcile: pick('reconcile'),
    recheck: { ...DEFAULT_POLICY.recheck, ...defaults.recheck, ...endpoint.recheck },
    providerId: pick('providerId'),
    ...resolveRequestPolicy(name, pick, profile),
  };
}

/** The compiled endpoint table: resolve a policy for a method and URL. */
export class EndpointTable {
  readonly #patterns: EndpointPattern[] = [];
  readonly #policies: ResolvedPolicy[] = [];
  readonly #byName = new Map<string, ResolvedPolicy>();
  readonly defaultPolicy: ResolvedPolicy;
  /** Some rule has a `reconcile` hook: `resume()` then runs the rechecks that are due. */
  readonly reconciles: boolean;

  constructor(defaults: PolicyOptions, endpoints: Readonly<Record<string, PolicyOptions>>) {
    this.defaultPolicy = resolvePolicy('default', defaults, {});
    this.#byName.set('default', this.defaultPolicy);
    let reconciles = defaults.reconcile !== undefined;
    for (const [source, options] of Object.entries(endpoints)) {
      let pattern: EndpointPattern;
      try {
        pattern = parseEndpointPattern(source);
      } catch (error) {
        throw new InvalidOptionsError(`endpoints["${source}"]`, (error as Error).message);
      }
      const policy = resolvePolicy(source, defaults, validatePolicy(options, `endpoints["${source}"]`));
      this.#patterns.push(pattern);
      this.#policies.push(policy);
      this.#byName.set(source, policy);
      reconciles ||= policy.reconcile !== undefined;
    }
    this.reconciles = reconciles;
  }

  /** The most specific policy for `method url`; rules match `path` (the client passes it relative to its `baseUrl`). */
  resolve(method: string, url: URL, path: string = url.pathname): ResolvedPolicy {
    const index = selectEndpoint(this.#patterns, method, path);
    return this.#policies[index] ?? this.defaultPolicy;
  }

  /** The policy a stored record was created with (falls back to the default when renamed). */
  byName(name: string): ResolvedPolicy {
    return this.#byName.get(name) ?? this.defaultPolicy;
  }
}
