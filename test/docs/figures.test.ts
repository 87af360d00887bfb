/**
 * The figures in README.md and BENCHMARKS.md are what `npm run figures`
 * writes from bench/results.json: never typed by hand, never stale.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type BenchResults, README_MARKERS, readmeFigures, render } from '../../scripts/figures.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => ({ file, text: readFileSync(`${root}${file}`, 'utf8') });

describe('figures', () => {
  it('`npm run figures -- --check` finds README.md and BENCHMARKS.md up to date', async () => {
    const result = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/figures.ts', '--check'],
        { cwd: root, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
            output: stdout + stderr,
          }),
      );
    });
    expect(result.output).toContain('README.md: up to date');
    expect(result.output).toContain('BENCHMARKS.md: up to date');
    expect(result.code, result.output).toBe(0);
  });

  it('a figure typed by hand inside the README block is caught', () => {
    const results = JSON.parse(read('bench/results.json').text) as BenchResults;
    const readme = read('README.md');
    const block = readmeFigures(results);
    expect(readme.text).toContain(`${README_MARKERS.start}\n\n${block}\n\n${README_MARKERS.end}`);
    const edited = { ...readme, text: readme.text.replace(block, block.replace(/\d+\.\d+×/, '9.99×')) };
    expect(edited.text).not.toBe(readme.text);
    const [readmeState, benchmarksState] = render(results, edited, read('BENCHMARKS.md'));
    expect(readmeState?.stale).toBe(true);
    expect(readmeState?.expected).toBe(readme.text);
    expect(benchmarksState?.stale).toBe(false);
  });
});
