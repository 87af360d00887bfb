/**
 * `serverConformance`: every rule of the server contract checked against a
 * live endpoint, as a report a test asserts on (vitest, node:test, any).
 */
import { CHECKS } from './checks.js';
import { sender } from './http.js';
import type { ConformanceCheck, ConformanceReport, ServerConformanceOptions } from './types.js';

/**
 * @example
 * const report = await serverConformance({ url: `${base}/payments`, otherCaller: { authorization: 'Bearer b' } });
 * expect(report.failed).toEqual([]);
 */
export async function serverConformance(options: ServerConformanceOptions): Promise<ConformanceReport> {
  const s = sender(options);
  const checks: ConformanceCheck[] = [];
  // One after another: the concurrency check must not race the others for the server's attention.
  for (const check of CHECKS) {
    try {
      const verdict = await check.run(s, options);
      checks.push({ rule: check.rule, title: check.title, ...verdict });
    } catch (error) {
      checks.push({
        rule: check.rule,
        title: check.title,
        status: 'fail',
        detail: `the check failed: ${String(error)}`,
      });
    }
  }
  const failed = checks.filter((c) => c.status === 'fail').map((c) => c.rule);
  return { passed: failed.length === 0, checks, failed };
}

/** The rules the kit checks, in order. */
export const CONFORMANCE_RULES: readonly string[] = CHECKS.map((c) => c.rule);
