/**
 * Option checks as small composable functions, each returning the first
 * problem as `field: what it accepts` (or nothing). Options are checked once,
 * at construction, and every refusal must name the field and the accepted
 * forms; a schema library would cost a browser bundle ~8 KB for that, so
 * these few shapes are written out here (`test/options.test.ts` holds the
 * messages).
 *
 * @example
 * const budget = shape({ ratio: optional(num({ min: 0, max: 1 })) });
 * budget({ ratio: 2 }, 'policy.budget'); // 'policy.budget.ratio: must be <= 1'
 */

/** Checks `value` found at `path`; returns `path: problem`, or undefined when it is fine. */
export type Check = (value: unknown, path: string) => string | undefined;

const at = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);
const fail = (path: string, problem: string): string => `${path === '' ? '(root)' : path}: ${problem}`;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A finite number within bounds (`int` for integers). Never `Infinity`, even
 * without a `max`: policy options are stored as JSON with each operation (its
 * policy copy), where `Infinity` becomes `null`, and no option reads
 * `Infinity` as "no limit".
 */
export function num(rules: { int?: boolean; min?: number; max?: number } = {}): Check {
  return (v, path) => {
    if (typeof v !== 'number' || Number.isNaN(v)) return fail(path, 'expected a number');
    if (!Number.isFinite(v)) return fail(path, 'must be a finite number');
    if (rules.int === true && !Number.isInteger(v)) return fail(path, 'must be an integer');
    if (rules.min !== undefined && v < rules.min) return fail(path, `must be >= ${rules.min}`);
    if (rules.max !== undefined && v > rules.max) return fail(path, `must be <= ${rules.max}`);
    return undefined;
  };
}

/** A string; `pattern` with the words that say what it must be. */
export function str(rules: { nonEmpty?: boolean; pattern?: RegExp; mustBe?: string } = {}): Check {
  return (v, path) => {
    if (typeof v !== 'string') return fail(path, 'expected a string');
    if (rules.nonEmpty === true && v.length === 0) return fail(path, 'must not be empty');
    if (rules.pattern !== undefined && !rules.pattern.test(v)) {
      return fail(path, rules.mustBe ?? `must match ${String(rules.pattern)}`);
    }
    return undefined;
  };
}

export const bool: Check = (v, path) => (typeof v === 'boolean' ? undefined : fail(path, 'expected a boolean'));
export const fn: Check = (v, path) => (typeof v === 'function' ? undefined : fail(path, 'must be a function'));
export const anything: Check = () => undefined;

/** One of the given values. */
export function oneOf(values: readonly (string | number | boolean)[]): Check {
  const words = values.map((value) => JSON.stringify(value));
  const expected = words.length === 1 ? `expected ${words[0]}` : `expected one of ${words.join(', ')}`;
  return (v, path) => (values.includes(v as string) ? undefined : fail(path, expected));
}

/** An absolute http(s) URL (what `new URL` accepts with a scheme). */
export const url: Check = (v, path) => {
  if (typeof v === 'string' && URL.canParse(v)) return undefined;
  return fail(path, 'must be an absolute URL, e.g. "https://api.example.com"');
};

export const optional =
  (check: Check): Check =>
  (v, path) =>
    v === undefined ? undefined : check(v, path);

export function list(item: Check): Check {
  return (v, path) => {
    if (!Array.isArray(v)) return fail(path, 'expected an array');
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i], at(path, String(i)));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

/** A map from keys (checked by `key`, whose problem is shown as "not an accepted key") to values. */
export function dict(key: Check, value: Check): Check {
  return (v, path) => {
    if (!isObject(v)) return fail(path, 'expected an object');
    for (const [name, entry] of Object.entries(v)) {
      const badKey = key(name, '');
      if (badKey !== undefined)
        return fail(at(path, name), `not an accepted key (${badKey.replace(/^\(root\): /, '')})`);
      const problem = value(entry, at(path, name));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

/** An object with these fields (unknown names are refused earlier, with suggestions: see option-keys.ts). */
export function shape(fields: Readonly<Record<string, Check>>): Check {
  const entries = Object.entries(fields);
  return (v, path) => {
    if (!isObject(v)) return fail(path, 'expected an object');
    for (const [name, check] of entries) {
      const problem = check(v[name], at(path, name));
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
}

/**
 * One of several forms: `false`, a name, an object… The message lists the
 * forms (`expected "ietf" or "stripe" or an object`); a value that is an
 * object is held to the object form, so its message names the inner field.
 */
export function either(forms: readonly { accepts: (v: unknown) => boolean; check: Check; say: string }[]): Check {
  const expected = `expected ${forms.map((form) => form.say).join(' or ')}`;
  return (v, path) => {
    const form = forms.find((candidate) => candidate.accepts(v));
    return form === undefined ? fail(path, expected) : form.check(v, path);
  };
}
