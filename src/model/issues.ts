/** zod issues as one-line, field-naming messages (zod/mini carries no messages of its own). */
import type * as z from 'zod/mini';

/** A one-line, field-naming description of a zod issue (zod/mini carries no messages). */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  switch (issue.code) {
    case 'invalid_type':
      return `${field}: expected ${issue.expected}`;
    case 'invalid_value':
      return `${field}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return `${field}: must be >= ${String(issue.minimum)}`;
    case 'too_big':
      return `${field}: must be <= ${String(issue.maximum)}`;
    case 'invalid_format':
      return `${field}: invalid ${issue.format}`;
    case 'unrecognized_keys':
      return `${field}: unknown option(s) ${issue.keys.join(', ')}`;
    case 'invalid_union':
      return `${field}: does not match any allowed form`;
    default:
      return `${field}: ${issue.message}`;
  }
}
