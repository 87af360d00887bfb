/**
 * How often the gate probes a host that refuses connections (policy/gate.ts).
 *
 * A refused connection costs the host next to nothing (its kernel answers,
 * no application code runs), and the probe's period is what bounds how late
 * a queue notices the host's return: so refused probes go more often than
 * the probes of a host answering 503, but never three within one second.
 */

/** The wait between probes of a refusing host, as a share of `probeIntervalMs`: 600 ms by default. */
export const REFUSED_PROBE_SHARE = 0.6;
/**
 * The wait is jittered down by at most this share of itself (500–600 ms by
 * default), so clients started together do not probe in step. Any two
 * probes are then at least 500 ms apart: at most two in any second.
 */
export const REFUSED_PROBE_JITTER = 1 / 6;
/** For this long a refusing host is probed at the same pace (a restart or a deploy is over within it). */
export const REFUSED_PROBE_STEADY_MS = 60_000;
/** Past that, each refused probe waits this much longer than the one before. */
export const REFUSED_PROBE_GROWTH = 1.03;
/** The wait stops growing at this many probe intervals (10 s by default). */
export const REFUSED_PROBE_MAX_INTERVALS = 10;

/**
 * The wait before the next probe of a host that refused `streak` probes in
 * a row past `REFUSED_PROBE_STEADY_MS` (0 within it): 500–600 ms at the
 * default interval, then slowly longer, so a long outage costs few
 * connections.
 */
export function refusedProbeDelayMs(intervalMs: number, streak: number, random: () => number): number {
  const nominal = Math.min(
    intervalMs * REFUSED_PROBE_MAX_INTERVALS,
    intervalMs * REFUSED_PROBE_SHARE * REFUSED_PROBE_GROWTH ** streak,
  );
  return Math.round(nominal * (1 - REFUSED_PROBE_JITTER * random()));
}
