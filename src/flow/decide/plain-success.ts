/**
 * The one verdict the loop reaches without loading next-step.ts: a 2xx
 * answer that no endpoint override names and that carries no hint header
 * (`Retry-After`, RateLimit) is `completed`, exactly as `classify` would
 * say (test/flow/decide/plain-success.test.ts holds the two together), and
 * needs no retry or stop decision. Anything else loads next-step.ts.
 */
import type { AttemptClass } from '../../model.js';
import type { Classification, Observation } from './classify.js';

/** The headers `parseServerHintMs` reads: an answer with one of them has its hint parsed, a 2xx too (it is stored). */
const HINT_HEADERS = ['retry-after', 'ratelimit-reset', 'ratelimit'];

export function plainSuccess(
  observation: Observation,
  overrides: Readonly<Record<number, AttemptClass>>,
): Classification | undefined {
  if (observation.kind !== 'response') return undefined;
  const { status, header, bodyTruncatedAtBytes } = observation;
  if (status < 200 || status >= 300 || overrides[status] !== undefined) return undefined;
  if (HINT_HEADERS.some((name) => header(name) != null)) return undefined;
  const detail = `status ${status}`;
  return {
    class: 'completed',
    sent: 'definitely',
    effect: 'applied',
    status,
    detail:
      bodyTruncatedAtBytes === undefined
        ? detail
        : `${detail}; body over maxResponseBytes (${bodyTruncatedAtBytes}), not kept`,
  };
}
