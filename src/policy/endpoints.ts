/**
 * Per-endpoint rules: `'POST /payments'`, `'GET /catalog/**'`, `'/v1/*'`.
 * The most specific matching rule wins; the default policy applies otherwise.
 *
 * Pattern syntax (matched against the URL's path, query ignored):
 * - an optional method, then a space, then a path;
 * - `*` matches exactly one path segment, `**` any number (also none);
 * - anything else matches literally.
 * Specificity: more literal segments, then fewer `**`, then a named
 * method, then more `*` (one segment is narrower than any number); ties go
 * to the rule listed first.
 */

export interface EndpointPattern {
  source: string;
  method: string | undefined;
  segments: readonly string[];
}

export function parseEndpointPattern(source: string): EndpointPattern {
  const trimmed = source.trim();
  const space = trimmed.indexOf(' ');
  const method = space > 0 ? trimmed.slice(0, space).toUpperCase() : undefined;
  const path = space > 0 ? trimmed.slice(space + 1).trim() : trimmed;
  if (!path.startsWith('/')) throw new Error(`pattern path must start with "/" (got "${path}")`);
  if (method !== undefined && !/^[A-Z]+$/.test(method)) throw new Error(`invalid method "${method}"`);
  return { source, method, segments: splitPath(path) };
}

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

export function matchesEndpoint(pattern: EndpointPattern, method: string, pathname: string): boolean {
  if (pattern.method !== undefined && pattern.method !== method.toUpperCase()) return false;
  return matchSegments(pattern.segments, splitPath(pathname));
}

function matchSegments(pattern: readonly string[], path: readonly string[]): boolean {
  const [head, ...rest] = pattern;
  if (head === undefined) return path.length === 0;
  if (head === '**') {
    for (let i = 0; i <= path.length; i++) if (matchSegments(rest, path.slice(i))) return true;
    return false;
  }
  const [first, ...others] = path;
  if (first === undefined) return false;
  if (head !== '*' && head !== first) return false;
  return matchSegments(rest, others);
}

/** Larger is more specific. */
function specificity(pattern: EndpointPattern): Score {
  const count = (segment: string) => pattern.segments.filter((s) => s === segment).length;
  const doubles = count('**');
  const singles = count('*');
  const literals = pattern.segments.length - doubles - singles;
  return [literals, -doubles, pattern.method === undefined ? 0 : 1, singles];
}

type Score = [number, number, number, number];

/** The index of the most specific matching pattern, or -1. */
export function selectEndpoint(patterns: readonly EndpointPattern[], method: string, pathname: string): number {
  let best = -1;
  let bestScore: Score | undefined;
  patterns.forEach((pattern, index) => {
    if (!matchesEndpoint(pattern, method, pathname)) return;
    const score = specificity(pattern);
    if (bestScore === undefined || compare(score, bestScore) > 0) {
      best = index;
      bestScore = score;
    }
  });
  return best;
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
