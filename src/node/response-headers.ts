/**
 * Response headers as Node's `fetch` shows them: lower-case names, and a
 * repeated header joined with ", " in the order received (fetch's `Headers`
 * joins; node:http's `headers` would keep only the first of some, such as
 * `location` or `content-type`, and make `set-cookie` an array).
 */

export interface FetchLikeHeaders {
  /** What `Headers.get(name)` answers: joined values, `null` when absent; any case. */
  get(name: string): string | null;
  /**
   * What the fetch transport records from `Headers.forEach`: the joined
   * values, but `set-cookie` as its last value (forEach yields each cookie
   * apart, and each replaces the one before).
   */
  record: Record<string, string>;
}

/** Reads node:http's `rawHeaders` (name, value, name, value, …). */
export function fetchLikeHeaders(rawHeaders: readonly string[]): FetchLikeHeaders {
  const joined: Record<string, string> = {};
  let lastCookie: string | undefined;
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    const name = (rawHeaders[at] as string).toLowerCase();
    const value = rawHeaders[at + 1] as string;
    joined[name] = Object.hasOwn(joined, name) ? `${joined[name]}, ${value}` : value;
    if (name === 'set-cookie') lastCookie = value;
  }
  return {
    get: (name) => {
      const lower = name.toLowerCase();
      return Object.hasOwn(joined, lower) ? (joined[lower] as string) : null;
    },
    record: lastCookie === undefined ? joined : { ...joined, 'set-cookie': lastCookie },
  };
}
