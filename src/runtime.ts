/**
 * The only place that touches clocks, timers, randomness and id minting.
 *
 * Everything time- or chance-dependent in oncely goes through a `Runtime`, so
 * tests can inject a fake one (see `createFakeRuntime` in `oncely/testing`)
 * and never wait on the wall clock for a retry delay.
 */
export interface Runtime {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Milliseconds on a clock that never steps (a wall-clock change, NTP, a
   * laptop waking up do not move it): for measuring how long we waited or
   * watched something. Only differences mean anything.
   */
  monotonicNow(): number;
  /**
   * Resolves after `ms` milliseconds. Rejects with the signal's reason when
   * `signal` aborts first, and clears its timer so nothing is left pending.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fn` once, `ms` milliseconds from now, for housekeeping nothing
   * waits on (a journal checkpoint, refreshing a held claim). Returns a
   * cancel. Never keeps a Node.js process alive. A test runtime fires it
   * when its virtual time passes, but never moves time for it.
   */
  schedule(ms: number, fn: () => void): () => void;
  /** A float in [0, 1). */
  random(): number;
  /** A random (v4) UUID. */
  uuid(): string;
  /**
   * Reports real work in progress (a store operation, an HTTP attempt) until
   * `work` settles, and returns it. The system runtime ignores it; a test
   * runtime uses it to move virtual time only while nothing real is
   * outstanding, so a timer can never overtake a write or a socket.
   */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * SHA-256 of `text` (as UTF-8), in lower-case hex: request fingerprints.
   * WebCrypto by default; `oncely/node` gives its clients Node's synchronous
   * hash, which costs a fraction of `crypto.subtle.digest` there.
   */
  sha256Hex(text: string): Promise<string>;
}

/**
 * The real runtime: `Date.now`, `setTimeout`, `Math.random`, `crypto.randomUUID`, WebCrypto.
 *
 * @internal Callers override single parts (`ClientOptions.runtime` is partial).
 */
export const systemRuntime: Runtime = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  sleep: sleepWithTimers,
  schedule(ms, fn) {
    const timer: unknown = setTimeout(fn, Math.max(0, ms));
    // Node's timers keep the process alive unless unref'd; browsers' are plain numbers.
    (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer as ReturnType<typeof setTimeout>);
  },
  random: () => Math.random(),
  // randomUUID needs a secure context in browsers; getRandomValues does not.
  uuid: () => globalThis.crypto?.randomUUID?.() ?? randomUuid(),
  track: (work) => work,
  sha256Hex: webCryptoSha256Hex,
};

/** A random (v4) UUID from `crypto.getRandomValues`, for where `crypto.randomUUID` is missing. */
export function randomUuid(): string {
  return formatUuid(globalThis.crypto.getRandomValues(new Uint8Array(16)), 4);
}

/** Formats 16 bytes as an RFC 9562 UUID of `version`, setting its version and variant bits. */
export function formatUuid(bytes: Uint8Array, version: number): string {
  const b = Uint8Array.from(bytes);
  b[6] = ((b[6] ?? 0) & 0x0f) | (version << 4);
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

async function webCryptoSha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (x) => x.toString(16).padStart(2, '0')).join('');
}

function sleepWithTimers(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
