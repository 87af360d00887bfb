/**
 * The documentation's blocks send to `https://api.example.com`: while one
 * runs, that host is routed to a local server (the block itself unchanged),
 * through a replaced `globalThis.fetch`, which the client honours.
 */
export function routeExampleApi(localUrl: string): void {
  const local = new URL(localUrl);
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(request?.url ?? String(input));
    if (url.hostname !== 'api.example.com') return original(input, init);
    url.protocol = local.protocol;
    url.host = local.host;
    return original(request === undefined ? url : new Request(url, request), init);
  };
}

/** Fails the block's run unless `condition` holds. */
export function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`the block did not do what it shows: ${what}`);
}
