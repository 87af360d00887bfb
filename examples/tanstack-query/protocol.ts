/**
 * What the TanStack Query demo page and its server say to each other
 * besides the payments (those go straight to the reference server). Plain
 * data, no imports: bundled into the page and used by the server.
 */

/** The endpoint the page pays through (on the reference server). */
export const PAYMENTS_PATH = '/payments';

/** `GET /config.json` */
export interface DemoConfig {
  /** The reference server's origin, e.g. `http://127.0.0.1:41234`. */
  api: string;
  /** Changes with every start of the demo server (names the page's database). */
  run: string;
}

/** `GET /control/ledger`: what the server saw, the proof of one effect per key. */
export interface LedgerView {
  /** Business effects (charges) by key. */
  effects: Record<string, number>;
  totalEffects: number;
  /** Requests that reached the server (CORS preflights aside). */
  requests: number;
}
