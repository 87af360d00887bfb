/**
 * What a view of a Fetch object (request-view.ts, response-view.ts) shares:
 * its prototype chain runs through the native class's prototype, so
 * `instanceof` holds, and every member it does not answer itself goes to
 * the real object, built on first need: the native prototype's getters and
 * methods, and the runtime's internal state where it keeps it in
 * symbol-keyed properties (Node's undici: `new Request(view)`, undici's own
 * brand checks and `fetch(view)` then work on the real object's state).
 */

/** The view's real object, built on first call (a symbol: no member a Fetch object could have). */
export const REAL = Symbol('oncely.real');

export interface View<T> {
  [REAL](): T;
}

/**
 * Links `view` (a view class's prototype) under `native.prototype` and
 * delegates to `[REAL]()` every member of it that `own` does not name, and
 * every symbol-keyed property of `sample` (a native instance).
 */
export function delegateTo(
  view: object,
  native: { prototype: object },
  own: ReadonlySet<PropertyKey>,
  sample: object,
): void {
  Object.setPrototypeOf(view, native.prototype);
  for (const key of Reflect.ownKeys(native.prototype)) {
    if (own.has(key) || key === 'constructor' || key === Symbol.toStringTag) continue;
    const member = Object.getOwnPropertyDescriptor(native.prototype, key);
    if (member?.get !== undefined) {
      Object.defineProperty(view, key, {
        configurable: true,
        get(this: View<object>) {
          return Reflect.get(this[REAL](), key);
        },
      });
    } else if (typeof member?.value === 'function') {
      Object.defineProperty(view, key, {
        configurable: true,
        writable: true,
        value(this: View<object>, ...args: unknown[]) {
          const real = this[REAL]();
          return (Reflect.get(real, key) as (...a: unknown[]) => unknown).apply(real, args);
        },
      });
    }
  }
  for (const key of Object.getOwnPropertySymbols(sample)) {
    Object.defineProperty(view, key, {
      configurable: true,
      get(this: View<object>) {
        return Reflect.get(this[REAL](), key);
      },
    });
  }
}

/** A body given once, as a Fetch object gives its body: the bytes, then a refusal. */
export const BODY_USED = 'Body is unusable: Body has already been read';
