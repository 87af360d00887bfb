/**
 * `bench/fleet.ts --save`: puts the fleet section into bench/results.json,
 * replacing the fleet section there and keeping every other, so the fleet
 * figures can be refreshed (then `npm run figures`) without re-running the
 * whole suite. The section's text says when it was measured; a full
 * `npm run bench` replaces the file whole, as before.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Section } from './section.js';

const RESULTS = fileURLToPath(new URL('../results.json', import.meta.url));

export function saveSection(section: Section): void {
  const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as { sections: Section[] };
  const at = results.sections.findIndex((s) => s.id === section.id);
  if (at >= 0) results.sections[at] = section;
  else results.sections.push(section);
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.error(`[fleet] section "${section.id}" saved to bench/results.json: run npm run figures`);
}
