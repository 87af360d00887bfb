/**
 * Unknown option names, refused with the name oncely uses instead. Users
 * arrive from ky, fetch, axios or a provider SDK and type those names
 * (`prefixUrl`, `timeout`, `retry`); an option that is silently ignored
 * would leave them with a policy they did not ask for, so every unknown key
 * fails construction, naming the key, the oncely name where there is one,
 * and the accepted names.
 */
import { InvalidOptionsError } from '../errors.js';

/** Hints by name: each row's names (space-separated) share its text, where `$` stands for the name. */
function hints(rows: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const table: Record<string, string> = {};
  for (const [names, text] of Object.entries(rows))
    for (const name of names.split(' ')) table[name] = text.replace('$', name);
  return table;
}

/** Names from retry libraries inside a policy (default or endpoint rule), and the oncely name. */
export const POLICY_OPTION_HINTS = hints({
  timeout: 'use `attemptTimeoutMs` (one attempt) or `deadlineMs` (the whole operation)',
  'retry retries maxRetries limit': 'use `maxAttempts` (retries + 1: the first attempt counts)',
  statusCodes: 'use `classify` (status → class, e.g. `{ 409: "permanent" }`)',
  methods: "name the method in the endpoint pattern (`'PUT /items/*'`)",
  delay: 'use `backoff.baseDelayMs`',
  backoffLimit: 'use `backoff.maxDelayMs`',
  jitter: 'use `backoff.jitter`',
  'maxRetryAfter afterStatusCodes': 'use `retryAfter` (`honor`, `maxRetryAfterMs`)',
});

/** Names from other HTTP clients at the top level of the client options, and where that setting lives here. */
export const CLIENT_OPTION_HINTS = hints({
  'prefixUrl prefix': 'use `baseUrl`',
  timeout: 'use `policy.attemptTimeoutMs` (one attempt) or `policy.deadlineMs` (the whole operation)',
  'retry retries maxRetries':
    'use `policy.maxAttempts` (retries + 1: the first attempt counts), per endpoint in `endpoints`',
  hooks: 'use `headers` (per-attempt credentials) and `client.on(event, fn)`',
  onRetry: "use `client.on('retry:scheduled', fn)`",
  throwHttpErrors: 'there is no switch: a final non-2xx rejects `send` with `OperationError`',
  'json body method signal key': 'a per-request field: `send({ url, $ })`',
  searchParams: 'put the query in each request’s `url`',
  idempotencyKey: 'a per-request field: `send({ url, key })`',
  'parseJson stringifyJson': 'not supported: JSON is read and written as JSON (check answers with `responseSchema`)',
  'credentials mode cache': 'pass a `fetch` option that sets it',
  storage: 'use `store`',
  'keyHeader idempotencyKeyHeader': 'set `keyHeader` on a profile (`defineProfile`)',
});

/**
 * Refuses a key of `options` that is not in `knownKeys`, with the oncely name
 * for a ky/fetch name (`prefixUrl` → `baseUrl`, from `hints`) or else the
 * closest accepted name (a typo), then the accepted names. `field` prefixes
 * the reported field (`''` for the top level).
 *
 * @example
 * checkOptionKeys({ prefixUrl: 'https://api.example.com' }, ['baseUrl', 'store'], '', CLIENT_OPTION_HINTS);
 * // throws InvalidOptionsError: Invalid option `prefixUrl`: unknown option: use `baseUrl`. Accepted: baseUrl, store
 */
export function checkOptionKeys(
  options: unknown,
  knownKeys: Iterable<string>,
  field: string,
  hints: Readonly<Record<string, string>> = {},
): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return;
  const known = [...knownKeys];
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const close = closestName(key, known);
    const advice = Object.hasOwn(hints, key) ? hints[key] : close && `did you mean \`${close}\`?`;
    throw new InvalidOptionsError(
      field === '' ? key : `${field}.${key}`,
      `unknown option${advice ? `: ${advice}` : ''}. Accepted: ${known.join(', ')}`,
    );
  }
}

/**
 * Refuses unknown top-level keys of `createClient` / `createBrowserClient`
 * options, suggesting the oncely name for names ky users type.
 *
 * @example
 * checkClientOptionKeys(options, Object.keys(CLIENT_KEYS)); // CLIENT_KEYS: Record<keyof ClientOptions, true>
 */
export function checkClientOptionKeys(options: unknown, knownKeys: Iterable<string>, field = ''): void {
  checkOptionKeys(options, knownKeys, field, CLIENT_OPTION_HINTS);
}

/**
 * The accepted name closest to `key`, if one is close enough to be a typo:
 * same letters ignoring case, or within an edit distance of a third of the
 * name (at least 1, at most 3).
 */
export function closestName(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/**
 * Edit distance counting a swap of two neighbours as one edit (`lsit` →
 * `list`), as typos go. Rows of the table kept: the current one and the two
 * before it (the swap looks two back).
 */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] ? (before[j - 2] as number) + 1 : j + i,
      );
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}
