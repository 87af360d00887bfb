/**
 * The record's shape as plain data, and the two checkers built from it:
 *
 * - `exactCheck(spec)`: yes only when a value is exactly in the current shape
 *   (plain objects, no unknown keys), answered without copying. The fast path
 *   of every store read and write.
 * - `validator(spec)`: decides any other value, names each problem by its
 *   field path and returns a clean copy without unknown keys.
 *
 * Why not zod at run time: the zod schema (`schema.ts`) stays the definition
 * the types are inferred from and the oracle the tests compare against, but
 * loading it costs a browser bundle ~8 KB for a path taken only by a record
 * that is damaged or written by another version. The checkers here accept
 * JSON data only (what stores hold); `test/flow/record.test.ts` holds them to
 * zod's answers, field by field.
 */

export type Spec =
  | { kind: 'string'; nonEmpty?: true; pattern?: RegExp; format?: string }
  | { kind: 'int'; min?: number }
  | { kind: 'boolean' }
  | { kind: 'literal'; value: string | number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'optional'; of: Spec }
  | { kind: 'dict'; of: Spec }
  | { kind: 'list'; of: Spec }
  | { kind: 'shape'; fields: Readonly<Record<string, Spec>> }
  | { kind: 'tagged'; tag: string; cases: Readonly<Record<string, Spec>> }
  | { kind: 'json' };

export const s = {
  string: (rules: { nonEmpty?: true; pattern?: RegExp; format?: string } = {}): Spec => ({ kind: 'string', ...rules }),
  int: (min?: number): Spec => (min === undefined ? { kind: 'int' } : { kind: 'int', min }),
  count: (): Spec => ({ kind: 'int', min: 0 }),
  boolean: (): Spec => ({ kind: 'boolean' }),
  literal: (value: string | number): Spec => ({ kind: 'literal', value }),
  enum: (values: readonly string[]): Spec => ({ kind: 'enum', values }),
  optional: (of: Spec): Spec => ({ kind: 'optional', of }),
  dict: (of: Spec): Spec => ({ kind: 'dict', of }),
  list: (of: Spec): Spec => ({ kind: 'list', of }),
  shape: (fields: Record<string, Spec>): Spec => ({ kind: 'shape', fields }),
  tagged: (tag: string, cases: Record<string, Spec>): Spec => ({ kind: 'tagged', tag, cases }),
  json: (): Spec => ({ kind: 'json' }),
};

/** A JSON object: an object literal or `JSON.parse` output (structured clones of them too). */
export function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** A key-value map as stores may hand it over: a JSON object, or one without a prototype. */
const isDictionary = (value: unknown): value is Record<string, unknown> =>
  isPlain(value) || (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === null);

const isList = (value: unknown): value is unknown[] =>
  Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;

type Check = (value: unknown) => boolean;

/** Compiles `spec` into a check that copies nothing and says yes only to values exactly in that shape. */
export function exactCheck(spec: Spec): Check {
  switch (spec.kind) {
    case 'string': {
      const { nonEmpty, pattern } = spec;
      return (v) =>
        typeof v === 'string' && (nonEmpty !== true || v.length > 0) && (pattern === undefined || pattern.test(v));
    }
    case 'int': {
      const min = spec.min ?? Number.MIN_SAFE_INTEGER;
      return (v) => Number.isSafeInteger(v) && (v as number) >= min;
    }
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'literal': {
      const { value } = spec;
      return (v) => v === value;
    }
    case 'enum': {
      const values = new Set<unknown>(spec.values);
      return (v) => values.has(v);
    }
    case 'optional': {
      const check = exactCheck(spec.of);
      return (v) => v === undefined || check(v);
    }
    case 'dict': {
      const check = exactCheck(spec.of);
      return (v) => {
        if (!isPlain(v)) return false;
        for (const key of Reflect.ownKeys(v)) {
          if (typeof key !== 'string' || key === '__proto__' || !check(v[key])) return false;
        }
        return true;
      };
    }
    case 'list': {
      const check = exactCheck(spec.of);
      return (v) => {
        if (!isList(v)) return false;
        for (let i = 0; i < v.length; i++) if (!check(v[i])) return false;
        return true;
      };
    }
    case 'shape': {
      const keys = Object.keys(spec.fields);
      const known = new Set(keys);
      const checks = keys.map((key) => exactCheck(spec.fields[key] as Spec));
      return (v) => {
        if (!isPlain(v)) return false;
        for (const key in v) if (!known.has(key)) return false;
        for (let i = 0; i < keys.length; i++) if (!(checks[i] as Check)(v[keys[i] as string])) return false;
        return true;
      };
    }
    case 'tagged': {
      const { tag } = spec;
      const cases = new Map(Object.entries(spec.cases).map(([name, of]) => [name, exactCheck(of)]));
      return (v) => isPlain(v) && (cases.get(v[tag] as string)?.(v) ?? false);
    }
    case 'json':
      return () => true;
  }
}

/** A value that failed; distinct from every value a record can hold. */
const FAILED: unique symbol = Symbol('failed');

type Validate = (value: unknown, path: string, problems: string[]) => unknown;

const where = (path: string): string => (path === '' ? '(root)' : path);
const join = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

/**
 * Compiles `spec` into a validator: it returns a clean copy of `value`
 * (unknown keys dropped, `__proto__` never copied) or `FAILED`, and pushes
 * one line per problem, naming the field (`attempts.0.sent: expected one of …`).
 */
export function validator(
  spec: Spec,
): (value: unknown) => { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const validate = compile(spec);
  return (value) => {
    const problems: string[] = [];
    const clean = validate(value, '', problems);
    return clean === FAILED || problems.length > 0 ? { ok: false, problems } : { ok: true, value: clean };
  };
}

function compile(spec: Spec): Validate {
  switch (spec.kind) {
    case 'string':
    case 'int':
    case 'boolean':
    case 'literal':
    case 'enum': {
      const check = exactCheck(spec);
      const expected = describe(spec);
      return (v, path, problems) => {
        if (check(v)) return v;
        problems.push(`${where(path)}: expected ${expected}`);
        return FAILED;
      };
    }
    case 'optional': {
      const inner = compile(spec.of);
      return (v, path, problems) => (v === undefined ? undefined : inner(v, path, problems));
    }
    case 'json':
      return (v) => v;
    case 'dict': {
      const inner = compile(spec.of);
      return (v, path, problems) => {
        if (!isDictionary(v)) return expectedObject(path, problems);
        const out: Record<string, unknown> = {};
        if (Object.getOwnPropertySymbols(v).length > 0) {
          problems.push(`${where(path)}: expected string keys only`);
          return FAILED;
        }
        for (const key of Object.keys(v)) {
          if (key === '__proto__') continue;
          const value = inner(v[key], join(path, key), problems);
          if (value !== FAILED) out[key] = value;
        }
        return out;
      };
    }
    case 'list': {
      const inner = compile(spec.of);
      return (v, path, problems) => {
        if (!isList(v)) {
          problems.push(`${where(path)}: expected a list`);
          return FAILED;
        }
        const out: unknown[] = [];
        for (let i = 0; i < v.length; i++) out.push(inner(v[i], join(path, i), problems));
        return out;
      };
    }
    case 'shape': {
      const fields = Object.entries(spec.fields).map(([key, of]) => [key, compile(of)] as const);
      return (v, path, problems) => {
        if (!isPlain(v)) return expectedObject(path, problems);
        const out: Record<string, unknown> = {};
        for (const [key, validate] of fields) {
          const value = validate(Object.hasOwn(v, key) ? v[key] : undefined, join(path, key), problems);
          if (value !== undefined && value !== FAILED) out[key] = value;
        }
        return out;
      };
    }
    case 'tagged': {
      const cases = new Map(Object.entries(spec.cases).map(([name, of]) => [name, compile(of)]));
      const names = [...cases.keys()].map((name) => JSON.stringify(name)).join(', ');
      return (v, path, problems) => {
        if (!isPlain(v)) return expectedObject(path, problems);
        const validate = cases.get(v[spec.tag] as string);
        if (validate !== undefined) return validate(v, path, problems);
        problems.push(`${join(path, spec.tag)}: expected one of ${names}`);
        return FAILED;
      };
    }
  }
}

function expectedObject(path: string, problems: string[]): typeof FAILED {
  problems.push(`${where(path)}: expected an object`);
  return FAILED;
}

/** What a leaf accepts, in the words of an error message. */
function describe(spec: Spec): string {
  switch (spec.kind) {
    case 'string':
      return spec.format ?? (spec.nonEmpty === true ? 'a non-empty string' : 'a string');
    case 'int':
      return spec.min === undefined ? 'an integer' : `an integer >= ${spec.min}`;
    case 'boolean':
      return 'true or false';
    case 'literal':
      return JSON.stringify(spec.value);
    case 'enum':
      return `one of ${spec.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return spec.kind;
  }
}
