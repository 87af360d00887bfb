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

/** Methods a pattern may name; any other word could never match a request. */
export const PATTERN_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const FORMS = "accepted forms: 'METHOD /path' or '/path', e.g. 'POST /payments', 'GET /catalog/**', '/v1/*'";

/**
 * Parses a pattern, refusing one that could never match a request (the
 * message names the pattern and the accepted forms): a method that is not
 * an HTTP method (`ANY /x`: omit the method to match all), a query string
 * or fragment (rules match the path only), a path not starting with `/`.
 */
export function parseEndpointPattern(source: string): EndpointPattern {
  const trimmed = source.trim();
  const space = trimmed.search(/\s/);
  const method = space > 0 ? trimmed.slice(0, space).toUpperCase() : undefined;
  const path = space > 0 ? trimmed.slice(space + 1).trim() : trimmed;
  // Every refusal names the pattern and ends with the accepted forms.
  const refuse = (why: string): never => {
    throw new Error(`pattern ${JSON.stringify(source)} ${why}; ${FORMS}`);
  };
  if (method !== undefined && !PATTERN_METHODS.includes(method)) {
    const hint = ['ANY', '*', 'ALL'].includes(method) ? ` (omit the method to match every method: '${path}')` : '';
    refuse(`names "${method}", which is not a method${hint}; methods: ${PATTERN_METHODS.join(', ')}`);
  }
  if (!path.startsWith('/')) refuse(`has no path starting with "/" (got "${path}")`);
  if (/[?#]/.test(path)) {
    refuse(
      `has a query string or fragment, which rules never match (they match the path only): use '${path.split(/[?#]/)[0]}'`,
    );
  }
  if (/\s/.test(path)) refuse('has a space inside its path (a URL path has none)');
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
