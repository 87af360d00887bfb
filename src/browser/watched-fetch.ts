/**
 * A fetch that tells connectivity when the network is gone. A transport
 * failure with no HTTP answer (and not a timeout or an abort) is the one
 * sign a browser gives that `navigator.onLine === true` is wrong (captive
 * portal, dead Wi-Fi): the client then pauses instead of burning attempts.
 */
import { isNotSentCode } from '../flow/decide/not-sent.js';

/** The first `code` along an error's `cause` chain (fetch wraps the socket error). */
export function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Wraps `fetch`: a transport failure without any answer calls `onUnreachable` before rethrowing. */
export function watchedFetch(
  fetch: typeof globalThis.fetch | undefined,
  onUnreachable: () => void,
): typeof globalThis.fetch {
  const base = fetch ?? ((input, init) => globalThis.fetch(input, init));
  return async (input, init) => {
    try {
      return await base(input, init);
    } catch (error) {
      const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
      // Provably unsent failures are reported as `not_sent` once the attempt is classified.
      if (signal?.aborted !== true && !isNotSentCode(errorCode(error))) onUnreachable();
      throw error;
    }
  };
}
