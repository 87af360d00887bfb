/**
 * The suite's two checks, free of any test framework so the cases run under
 * whichever one the store's author uses.
 */
import canonicalize from 'canonicalize';

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`store contract: ${message}`);
}

export function same(actual: unknown, expected: unknown, message: string): void {
  // Canonical JSON: stores may return keys in another order.
  const a = canonicalize(actual) ?? 'undefined';
  const e = canonicalize(expected) ?? 'undefined';
  check(a === e, `${message}\n  expected ${e}\n  actual   ${a}`);
}
