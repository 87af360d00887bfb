/**
 * zod issues as one-line messages that name the field and what it accepts.
 * zod/mini carries no messages of its own (every issue says "Invalid input"),
 * so each issue code is spelled out here from the issue's data.
 */
import type * as z from 'zod/mini';

type Issue = z.core.$ZodIssue;

/**
 * `field: problem`, e.g. `budget.ratio: must be <= 1` or
 * `profile: expected "ietf" or "stripe" or an object`. A union names its
 * accepted forms; when the value had the shape of exactly one form, the
 * issue inside that form is described instead (its field is the precise one).
 */
export function describeIssue(issue: Issue): string {
  return describeAt(issue, []);
}

function describeAt(issue: Issue, base: readonly PropertyKey[]): string {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union') {
    const inner = issue.errors.flatMap((branch) => {
      const deep = branch.find((i) => i.path.length > 0);
      return deep === undefined ? [] : [deep];
    });
    const [only] = inner;
    if (inner.length === 1 && only !== undefined) return describeAt(only, path);
    return `${fieldOf(path)}: expected ${formsOf(issue.errors)}`;
  }
  return `${fieldOf(path)}: ${problemOf(issue)}`;
}

function fieldOf(path: readonly PropertyKey[]): string {
  return path.length > 0 ? path.map(String).join('.') : '(root)';
}

/** The forms a union accepts, from each branch's root issue: `"ietf" or "stripe" or an object`. */
function formsOf(branches: readonly (readonly Issue[])[]): string {
  const forms = new Set<string>();
  for (const branch of branches) {
    const root = branch.find((i) => i.path.length === 0) ?? branch[0];
    if (root === undefined) continue;
    if (root.code === 'invalid_value') for (const v of root.values) forms.add(literal(v));
    else if (root.code === 'invalid_type') forms.add(article(root.expected));
    else forms.add(problemOf(root));
  }
  return [...forms].join(' or ');
}

function problemOf(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${article(issue.expected)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `expected ${literal(issue.values[0])}`
        : `expected one of ${issue.values.map(literal).join(', ')}`;
    case 'too_small':
      return `must be ${bound(issue.origin, issue.inclusive === false ? '>' : '>=', issue.minimum)}`;
    case 'too_big':
      return `must be ${bound(issue.origin, issue.inclusive === false ? '<' : '<=', issue.maximum)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_format':
      return (
        ownMessage(issue) ??
        (issue.format === 'url'
          ? 'must be an absolute URL, e.g. "https://api.example.com"'
          : issue.format === 'regex' && 'pattern' in issue
            ? `must match ${String(issue.pattern)}`
            : `must be a valid ${issue.format}`)
      );
    case 'unrecognized_keys':
      return `unknown option(s) ${issue.keys.map((k) => `\`${k}\``).join(', ')}`;
    case 'invalid_key':
      return `not an accepted key (${issue.issues.map(problemOf).join('; ')})`;
    case 'invalid_element':
      return `has an invalid entry (${issue.issues.map(problemOf).join('; ')})`;
    default:
      return ownMessage(issue) ?? 'failed its check';
  }
}

/** The message a schema gave the check itself (`{ error: '…' }`); zod/mini's placeholder is not one. */
function ownMessage(issue: Issue): string | undefined {
  return issue.message !== '' && issue.message !== 'Invalid input' ? issue.message : undefined;
}

function bound(origin: string, op: string, limit: unknown): string {
  const n = String(limit);
  if (origin === 'string') return `${op} ${n} characters long`;
  if (origin === 'array' || origin === 'set') return `${op} ${n} entries long`;
  return `${op} ${n}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function literal(value: unknown): string {
  return typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
}
