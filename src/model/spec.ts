/**
 * The record's shape as plain data, and the two checkers built from it:
 *
 * - `exactCheck(spec)`: yes only when a value is exactly in the current shape
 *   (plain objects, no unknown keys), answered without copying. The fast path
 *   of every store read and write.
 * - `validator(spec)` (spec-validator.ts, which the browser's stores load
 *   only when a value fails the exact check): decides any other value, names
 *   each problem by its field path and returns a clean copy without unknown keys.
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

/** What spec-validator.ts uses of this module, handed to it (it imports only types: no chunk shared with the client). */
export const SPEC_KIT = { exactCheck, isPlain };
export type SpecKit = typeof SPEC_KIT;
