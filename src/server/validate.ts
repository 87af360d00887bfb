/**
 * Options checked with zod at construction: the first problem becomes an
 * `InvalidOptionsError` naming the field (`routes["POST /x"].leaseMs`), so a
 * bad deploy fails at start-up, not on the first payment.
 */
import type * as z from 'zod';
import { InvalidOptionsError } from '../errors.js';

export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = fieldName(root, issue?.path ?? []);
  const extra = issue?.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
  throw new InvalidOptionsError(field, `${issue?.message ?? 'is invalid'}${extra}`);
}

function fieldName(root: string, path: readonly PropertyKey[]): string {
  let name = root;
  for (const part of path) {
    if (typeof part === 'number') name += `[${part}]`;
    else if (typeof part === 'string' && /^[A-Za-z_$][\w$]*$/.test(part)) name += `.${part}`;
    else name += `[${JSON.stringify(String(part))}]`;
  }
  return name;
}
