/**
 * A 2xx body checked against the caller's `responseSchema` (any Standard
 * Schema). Loaded with `import()` by settle.ts only for a request that has
 * a schema: a page whose requests have none never downloads it. It imports
 * only types; what it uses of the client comes in `kit`.
 */
import type { ResponseValidationError as ValidationError } from '../../errors.js';
import type { OperationRecord } from '../../model.js';
import type { StandardIssue, StandardSchemaV1 } from '../request/operation.js';
import type { SchemaKit } from './settle.js';

/**
 * `data` as the caller's schema returns it. The server has completed the
 * operation whatever the schema does: issues, a throw, a rejection or a
 * return that is no Standard Schema result all become the same
 * `ResponseValidationError` (key, status, raw result; what was thrown as
 * `cause`), never an untyped error a catch-all would take for "not done,
 * send it again" under a new key.
 */
export async function validated(
  kit: SchemaKit,
  record: OperationRecord,
  data: unknown,
  schema: StandardSchemaV1,
): Promise<unknown> {
  const { ResponseValidationError } = kit;
  const result = record.result as NonNullable<OperationRecord['result']>;
  const invalid = (issues: string[], cause?: unknown): ValidationError =>
    new ResponseValidationError(record.key, result.status, data, issues, record.attempts, result.headers, cause);
  let checked: unknown;
  try {
    checked = await schema['~standard'].validate(data);
  } catch (error) {
    throw invalid([`the response schema threw: ${(error as Error | null)?.message ?? String(error)}`], error);
  }
  const issues = (checked as { issues?: unknown } | null)?.issues;
  if (typeof checked === 'object' && checked !== null && issues === undefined)
    return (checked as { value: unknown }).value;
  throw invalid(
    Array.isArray(issues)
      ? issues.map((issue: StandardIssue | null) => issueText(issue))
      : ['the response schema returned no Standard Schema result'],
  );
}

/**
 * One Standard Schema issue as `data.items[0].amount: message`: the path says
 * which field of the answer is wrong, which the message alone never does
 * (zod's reads "Invalid input: expected number, received string").
 */
export function issueText(issue: StandardIssue | null): string {
  const message = String(issue?.message ?? issue);
  const path = Array.isArray(issue?.path) ? issue.path : [];
  // No path: the issue is about the whole body, or the vendor put the place in its message.
  if (path.length === 0) return message;
  let at = 'data';
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'number') at += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) at += `.${key}`;
    else at += `[${JSON.stringify(String(key))}]`;
  }
  return `${at}: ${message}`;
}
