/**
 * What an attempt's URL may say in telemetry: the HTTP semantic conventions'
 * `url.full` without credentials or query values (tokens, signatures and
 * personal data travel there), and the server's address and port.
 */

/** The target of an operation as span attributes. */
export interface Target {
  method: string;
  /** `url.full`: user info and every query value replaced by `REDACTED`, no fragment. */
  urlFull: string;
  serverAddress: string;
  serverPort: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** Splits an event's `operation` (`METHOD url`) into span attributes; `undefined` when the URL does not parse. */
export function targetOf(operation: string): Target | undefined {
  const space = operation.indexOf(' ');
  if (space <= 0) return undefined;
  let url: URL;
  try {
    url = new URL(operation.slice(space + 1));
  } catch {
    return undefined;
  }
  return {
    method: operation.slice(0, space).toUpperCase(),
    urlFull: redactedUrl(url),
    serverAddress: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    serverPort: url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port),
  };
}

/** `url` with user info and query values redacted (names kept: they say which parameters were sent). */
export function redactedUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = '';
  if (copy.username !== '') copy.username = 'REDACTED';
  if (copy.password !== '') copy.password = 'REDACTED';
  if (copy.search !== '') {
    const names = [...copy.searchParams.keys()];
    copy.search = names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&');
  }
  return copy.href;
}
