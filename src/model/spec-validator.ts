/**
 * The validator built from a spec (spec.ts): it decides any value, names
 * each problem by its field path and returns a clean copy without unknown
 * keys. Needed only for a value the exact check refuses: a record damaged,
 * or written by another version. The public `parseRecord` (parse-record.ts)
 * bundles it; the memory and IndexedDB stores load it with `import()` the
 * first time they meet such a value (parse.ts), so a page whose records are
 * its own never downloads it. It imports only types; what it uses of
 * spec.ts comes in `kit`.
 */
import type { Spec, SpecKit } from './spec.js';

/** A key-value map as stores may hand it over: a JSON object, or one without a prototype. */
const isDictionary = (value: unknown, isPlain: SpecKit['isPlain']): value is Record<string, unknown> =>
  isPlain(value) || (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === null);

const isList = (value: unknown): value is unknown[] =>
  Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;

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
  kit: SpecKit,
): (value: unknown) => { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const validate = compile(spec, kit);
  return (value) => {
    const problems: string[] = [];
    const clean = validate(value, '', problems);
    return clean === FAILED || problems.length > 0 ? { ok: false, problems } : { ok: true, value: clean };
  };
}

function compile(spec: Spec, kit: SpecKit): Validate {
  const { exactCheck, isPlain } = kit;
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
      const inner = compile(spec.of, kit);
      return (v, path, problems) => (v === undefined ? undefined : inner(v, path, problems));
    }
    case 'json':
      return (v) => v;
    case 'dict': {
      const inner = compile(spec.of, kit);
      return (v, path, problems) => {
        if (!isDictionary(v, isPlain)) return expectedObject(path, problems);
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
      const inner = compile(spec.of, kit);
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
      const fields = Object.entries(spec.fields).map(([key, of]) => [key, compile(of, kit)] as const);
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
      const cases = new Map(Object.entries(spec.cases).map(([name, of]) => [name, compile(of, kit)]));
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
