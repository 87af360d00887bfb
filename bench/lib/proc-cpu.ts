/**
 * CPU time of the PostgreSQL server (the postmaster and every backend) from
 * /proc, so the fleet benchmark can say whether the database or the workers
 * ran out of machine. Linux only; elsewhere it reports NaN.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's utime and stime (CLK_TCK: 100 on every Linux we run on). */
const TICKS_PER_SECOND = 100;

interface Stat {
  pid: number;
  ppid: number;
  ticks: number;
  /** CPU of its children that ended and were waited for (a postmaster's backends that closed). */
  childTicks: number;
}

function stats(): Stat[] {
  const out: Stat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields start after the last ')'.
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      out.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        childTicks: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** The postmaster listening on `port`: a `postgres` process whose command line names the port. */
export function postmasterPid(port: number): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (cmdline[0]?.endsWith('postgres') && cmdline.includes(`${port}`)) return Number(name);
    } catch {
      // gone
    }
  }
  return undefined;
}

/**
 * CPU ms used so far by `pid` and its children: the live ones, and those that ended (a backend whose
 * connection a pool closed: the postmaster waited for it, so its CPU is in the postmaster's children's time).
 */
export function treeCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const all = stats();
    const ended = all.find((s) => s.pid === pid)?.childTicks ?? 0;
    const ticks = ended + all.filter((s) => s.pid === pid || s.ppid === pid).reduce((sum, s) => sum + s.ticks, 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}
