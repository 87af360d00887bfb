/**
 * The TanStack mutation key an operation was started under, stored in its
 * `meta` at write-ahead: it is what ties an operation found after a reload
 * (when the `mutate()` call and its closures are gone) back to the handlers
 * registered for that key.
 */
import canonicalize from 'canonicalize';
import { InvalidOptionsError } from '../errors.js';
import type { OperationRecord } from '../model.js';

/** The `meta` field that carries the mutation key. */
export const MUTATION_KEY_META = 'mutationKey';

/** A TanStack mutation key (as `@tanstack/query-core`'s `MutationKey`). */
export type MutationKey = readonly unknown[];

/** One text per key, whatever the order of object fields: how keys are compared. */
export function keyText(key: MutationKey): string {
  return canonicalize(key) ?? '';
}

/** `key`, checked to be plain JSON data (it is stored with every operation). */
export function checkMutationKey(key: unknown, field = 'mutationKey'): MutationKey {
  if (!Array.isArray(key) || key.length === 0) throw new InvalidOptionsError(field, 'must be a non-empty array');
  const problem = jsonProblem(key, field, 0);
  if (problem !== undefined) throw new InvalidOptionsError(problem.field, problem.message);
  return key;
}

/** The mutation key stored with `record`, if it was started by `mutationOptions`. */
export function storedMutationKey(record: OperationRecord | undefined): MutationKey | undefined {
  const key = record?.meta?.[MUTATION_KEY_META];
  return Array.isArray(key) ? key : undefined;
}

function jsonProblem(value: unknown, field: string, depth: number): { field: string; message: string } | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : { field, message: 'must be finite' };
  if (depth > 8) return { field, message: 'nests too deep (8 levels at most)' };
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const problem = jsonProblem(item, `${field}.${i}`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [name, item] of Object.entries(value)) {
      const problem = jsonProblem(item, `${field}.${name}`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  return { field, message: `must be plain JSON data (strings, numbers, arrays, plain objects), not ${typeof value}` };
}
