/**
 * Option checks as small composable functions, each throwing
 * `InvalidOptionsError` for the first problem, naming the field and what it
 * accepts. Options are checked once, at construction; a schema library would
 * cost a browser bundle ~8 KB for that, so these few shapes are written out
 * here (`test/options.test.ts` holds the messages). Throwing at the problem
 * (rather than returning it up the chain) keeps each check one line.
 *
 * @example
 * const budget = shape({ ratio: num({ min: 0, max: 1 }) });
 * budget({ ratio: 2 }, 'policy.budget'); // throws: Invalid option `policy.budget.ratio`: must be <= 1
 */
import { InvalidOptionsError } from '../errors.js';

/** Checks `value` found at `path`; throws `InvalidOptionsError` naming `path` when it is not accepted. */
export type Check = (value: unknown, path: string) => void;

const at = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** Throws for `path` (the top level's own name when the path is empty). */
export const fail = (path: string, problem: string): never => {
  throw new InvalidOptionsError(path === '' ? 'options' : path, problem);
};

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A check that holds when `ok` does, else fails with `problem`. */
export const when =
  (ok: (v: unknown) => boolean, problem: string): Check =>
  (v, path) =>
    ok(v) || fail(path, problem);

/**
 * A finite number within bounds (`int` for integers). Never `Infinity`, even
 * without a `max`: policy options are stored as JSON with each operation (its
 * policy copy), where `Infinity` becomes `null`, and no option reads
 * `Infinity` as "no limit".
 */
export const num =
  (rules: { int?: boolean; min?: number; max?: number } = {}): Check =>
  (v, path) => {
    if (typeof v !== 'number' || Number.isNaN(v)) fail(path, 'expected a number');
    const n = v as number;
    if (!Number.isFinite(n)) fail(path, 'must be a finite number');
    if (rules.int && !Number.isInteger(n)) fail(path, 'must be an integer');
    if (n < (rules.min ?? n)) fail(path, `must be >= ${rules.min}`);
    if (n > (rules.max ?? n)) fail(path, `must be <= ${rules.max}`);
  };

/** A string; `pattern` with the words that say what it must be. */
export const str =
  (rules: { nonEmpty?: boolean; pattern?: RegExp; mustBe?: string } = {}): Check =>
  (v, path) => {
    if (typeof v !== 'string') fail(path, 'expected a string');
    if (rules.nonEmpty && v === '') fail(path, 'must not be empty');
    if (rules.pattern && !rules.pattern.test(v as string)) fail(path, rules.mustBe ?? `must match ${rules.pattern}`);
  };

export const bool: Check = when((v) => typeof v === 'boolean', 'expected a boolean');
export const fn: Check = when((v) => typeof v === 'function', 'must be a function');

/** One of the given values. */
export const oneOf = (values: readonly (string | number | boolean)[]): Check =>
  when(
    (v) => values.includes(v as string),
    `expected ${values.length === 1 ? '' : 'one of '}${values.map((value) => JSON.stringify(value)).join(', ')}`,
  );

/** An absolute http(s) URL (what `new URL` accepts with a scheme). */
export const url: Check = when(
  (v) => typeof v === 'string' && URL.canParse(v),
  'must be an absolute URL, e.g. "https://api.example.com"',
);

export const optional =
  (check: Check): Check =>
  (v, path) =>
    v === undefined || check(v, path);

export const list =
  (item: Check): Check =>
  (v, path) => {
    if (!Array.isArray(v)) fail(path, 'expected an array');
    for (let i = 0; i < (v as unknown[]).length; i++) item((v as unknown[])[i], at(path, String(i)));
  };

/** A map whose keys match `key` (else "not an accepted key (`keyMustBe`)") to values checked by `value`. */
export const dict =
  (key: RegExp, keyMustBe: string, value: Check): Check =>
  (v, path) => {
    if (!isObject(v)) fail(path, 'expected an object');
    for (const [name, entry] of Object.entries(v as object)) {
      if (!key.test(name)) fail(at(path, name), `not an accepted key (${keyMustBe})`);
      value(entry, at(path, name));
    }
  };

/**
 * An object with these fields (unknown names are refused earlier, with
 * suggestions: see option-keys.ts). Options are optional, so a field left
 * `undefined` is not checked unless every field is `required`.
 */
export const shape =
  (fields: Readonly<Record<string, Check>>, required = false): Check =>
  (v, path) => {
    if (!isObject(v)) fail(path, 'expected an object');
    for (const name in fields) {
      const value = (v as Record<string, unknown>)[name];
      if (required || value !== undefined) fields[name]?.(value, at(path, name));
    }
  };

/**
 * One of several forms: `false`, a name, an object… The message lists the
 * forms (`expected "ietf" or "stripe" or an object`); a value that is an
 * object is held to the object form, so its message names the inner field.
 */
export const either =
  (forms: readonly { accepts: (v: unknown) => boolean; check?: Check; say: string }[]): Check =>
  (v, path) => {
    const form = forms.find((candidate) => candidate.accepts(v));
    form ? form.check?.(v, path) : fail(path, `expected ${forms.map((f) => f.say).join(' or ')}`);
  };
