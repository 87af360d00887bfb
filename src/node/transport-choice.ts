/**
 * Which transport sends a request of an `oncely/node` client that was
 * given no `fetch`: node:http (http-transport.ts), which costs a third of
 * the CPU of Node's `fetch`, whenever that changes nothing a caller can
 * see; else the fetch transport, as before. Decided per request, because
 * what decides can change while the client lives (a test framework that
 * replaces the global `fetch` after the client was made).
 */
import { isNodesOwnFetchInPlace, type Transport, type TransportRequest } from '../flow/transport/transport.js';
import { nodeHttpTransport } from './http-transport.js';

/**
 * A transport that sends with node:http what `sendsWithNodeHttp` allows
 * and gives everything else to `viaFetch`.
 *
 * @param viaFetch the client's fetch transport (`globalThis.fetch`, looked up per request).
 * @param viaNodeHttp the node:http transport (a test may pass one that watches it).
 */
export function nodeOrFetchTransport(viaFetch: Transport, viaNodeHttp: Transport = nodeHttpTransport()): Transport {
  return (request, context) =>
    sendsWithNodeHttp(request) ? viaNodeHttp(request, context) : viaFetch(request, context);
}

/**
 * node:http only where fetch would do nothing else: an http(s) URL; not a
 * safe read sent without a key that follows redirects (fetch follows them,
 * with its rules for each hop); and only while `globalThis.fetch` is still
 * Node's own, as oncely found it: a `fetch` put in its place (msw, nock's
 * fetch, a stub, an app's wrapper) must keep seeing every request.
 */
export function sendsWithNodeHttp(request: TransportRequest): boolean {
  return request.redirect !== 'follow' && /^https?:/i.test(request.url) && isNodesOwnFetchInPlace();
}
