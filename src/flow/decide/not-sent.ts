/**
 * Transport error codes that prove a request never left this machine. Apart
 * from classify.ts so that the browser's watched fetch can use it without
 * loading the classifier on a page's start-up path.
 */

/** Error codes that prove the request never left this machine. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'ERR_INTERNET_DISCONNECTED',
  'OFFLINE',
]);

/** True when a transport error code proves nothing was sent. */
export function isNotSentCode(code: string | undefined): boolean {
  return code !== undefined && NOT_SENT_CODES.has(code);
}
