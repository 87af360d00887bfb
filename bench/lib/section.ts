/**
 * What every benchmark produces: a titled table, the raw figures, and the
 * targets it checks. `bench/run.ts` runs each benchmark in its own process
 * and collects these; a benchmark run on its own prints its section.
 */
import { writeFileSync } from 'node:fs';

/**
 * The five targets of the performance work; a check that belongs to one
 * names it, and the report gives each target met only when all its checks are.
 */
export const GOALS = {
  bundle: '1. Bundle: a browser bundle a checkout page can afford',
  overhead: '2. Overhead: ky-level cost per request',
  durability: '3. Durability: one durable write before the first byte',
  resume: '4. Resume at scale: 100,000 pending operations',
  outage: '5. Outage: many separate clients riding out a 503 storm',
} as const;

export type Goal = keyof typeof GOALS;

export interface TargetCheck {
  /** What is checked, e.g. 'memory store ≥ 0.90× bare ky (c=1)'. */
  name: string;
  measured: string;
  met: boolean;
  /** The target this check is part of; checks without one are reported as other checks. */
  goal?: Goal;
}

export interface Section {
  id: string;
  title: string;
  /** Markdown table(s) and short notes. */
  text: string;
  targets: TargetCheck[];
  data: unknown;
}

/** Writes the section to the file given by `--json <file>`, or prints it. */
export function emit(section: Section): void {
  const at = process.argv.indexOf('--json');
  const file = at >= 0 ? process.argv[at + 1] : undefined;
  if (file !== undefined) {
    writeFileSync(file, JSON.stringify(section, null, 2));
    return;
  }
  console.log(`\n## ${section.title}\n\n${section.text}\n`);
  for (const t of section.targets) console.log(`${t.met ? 'MET   ' : 'MISSED'} ${t.name}: ${t.measured}`);
}

/** `--quick` makes every benchmark shorter (for a smoke run, not for numbers). */
export const quick = process.argv.includes('--quick');

/** `--rounds=N` overrides a benchmark's number of rounds. */
export function roundsOption(fallback: number): number {
  const value = process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length);
  const n = value === undefined ? Number.NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
