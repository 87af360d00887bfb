/**
 * What a view of a Fetch object (request-view.ts, response-view.ts,
 * node-request-view.ts) shares: its prototype chain runs through the native
 * class's prototype, so `instanceof` holds, and every member it does not
 * answer itself goes to the real object, built on first need: the native
 * prototype's getters and methods, and the runtime's internal state where it
 * keeps it in symbol-keyed properties (Node's undici: `new Request(view)`,
 * undici's own brand checks and `fetch(view)` then work on the real
 * object's state). Whether a runtime takes views at all is a self-test, run
 * once on first use (`selfTest`).
 *
 * A view with a body (`BodyView`) answers its body from bytes in hand,
 * once, as the real object would; once the real object is built, every
 * body member is the real one's, and a body read through the view before
 * is spent on the real one too.
 */

/** The view's real object, built on first call (a symbol: no member a Fetch object could have). */
export const REAL = Symbol('oncely.real');

export interface View<T> {
  [REAL](): T;
}

/**
 * Links `view` (a view class's prototype) under `native.prototype` and
 * delegates to `[REAL]()` every member of it that `own` does not name, and
 * every symbol-keyed property of `sample` (a native instance). `shared`: a
 * base class's prototype (`BodyView.prototype`) whose members are copied in
 * between, so one base serves views of several native classes (its methods
 * keep working: its private fields are on every instance its constructor made).
 */
export function delegateTo(
  view: object,
  native: { prototype: object },
  own: ReadonlySet<PropertyKey>,
  sample: object,
  shared?: object,
): void {
  if (shared === undefined) Object.setPrototypeOf(view, native.prototype);
  else {
    const layer = Object.create(native.prototype) as object;
    for (const key of Reflect.ownKeys(shared)) {
      if (key === 'constructor') continue;
      Object.defineProperty(layer, key, Object.getOwnPropertyDescriptor(shared, key) as PropertyDescriptor);
    }
    Object.setPrototypeOf(view, layer);
  }
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

/**
 * `install` (a view class linked under its native class, then tried the
 * ways an application uses one) run once, on first call: whether views
 * work in this runtime. A throw is a no.
 */
export function selfTest(install: () => boolean): () => boolean {
  let works: boolean | undefined;
  return () => {
    if (works === undefined) {
      try {
        works = install();
      } catch {
        works = false;
      }
    }
    return works;
  };
}

/** A body given once, as a Fetch object gives its body: the bytes, then a refusal. */
export const BODY_USED = 'Body is unusable: Body has already been read';

/** The body members every view with a body answers itself. */
export const BODY_MEMBERS: readonly PropertyKey[] = ['bodyUsed', 'text', 'json', 'arrayBuffer', 'bytes'];

const utf8 = new TextDecoder();

/**
 * A view of a `Request` or `Response` with a body in hand. Subclasses say
 * how the real object is built (`build`); linked under the native class by
 * `delegateTo(…, BodyView.prototype)`.
 */
export abstract class BodyView<T extends Request | Response> implements View<T> {
  #real: T | undefined = undefined;
  #used = false;
  /** The body as read already (`undefined`: the view has none, and its body members are the real one's). */
  readonly #bytes: Uint8Array | undefined;
  /** Its JSON, when it was parsed already (the fingerprint's): the first `json()` hands it over. */
  #parsed: { value: unknown } | undefined;

  constructor(bytes: Uint8Array | undefined, parsed: { value: unknown } | undefined) {
    this.#bytes = bytes;
    this.#parsed = parsed;
  }

  /** The real object, made from the view's parts (its body from `bytes`, when there are any). */
  protected abstract build(bytes: Uint8Array | undefined): T;

  /** The real object if it was built already. */
  protected get built(): T | undefined {
    return this.#real;
  }

  get bodyUsed(): boolean {
    return this.#real === undefined ? this.#used : this.#real.bodyUsed;
  }

  async text(): Promise<string> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().text() : utf8.decode(bytes);
  }

  async json(): Promise<unknown> {
    const bytes = this.#take();
    if (bytes === undefined) return this[REAL]().json();
    const parsed = this.#parsed;
    this.#parsed = undefined;
    return parsed === undefined ? JSON.parse(utf8.decode(bytes)) : parsed.value;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    // A copy, as a plain array: `slice` on a Node `Buffer` is a window on the same memory.
    return bytes === undefined ? this[REAL]().arrayBuffer() : (new Uint8Array(bytes).buffer as ArrayBuffer);
  }

  async bytes(): Promise<Uint8Array> {
    const bytes = this.#take();
    return bytes === undefined ? this[REAL]().bytes() : new Uint8Array(bytes);
  }

  /** The body bytes, once, as a Fetch object gives its body once; `undefined` when the real one answers. */
  #take(): Uint8Array | undefined {
    if (this.#real !== undefined || this.#bytes === undefined) return undefined;
    if (this.#used) throw new TypeError(BODY_USED);
    this.#used = true;
    return this.#bytes;
  }

  /** The real object, built on first need. */
  [REAL](): T {
    if (this.#real !== undefined) return this.#real;
    const real = this.build(this.#bytes);
    // Read through the view already: the real one's body is spent too (reading it marks it so at once).
    if (this.#used) real.arrayBuffer().catch(() => undefined);
    this.#real = real;
    return real;
  }
}
