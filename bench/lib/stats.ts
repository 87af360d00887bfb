/** Small statistics and formatting helpers shared by the benchmarks. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[index] as number;
}

/**
 * How a per-round figure spread over the rounds, beside its median: the
 * middle half (quartiles) and the whole range, e.g. `middle half
 * 0.97–1.03×, all 0.91–1.08×`.
 */
export function fmtRatioSpread(values: readonly number[]): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length < 2) return 'one round';
  const span = (low: number, high: number) => `${low.toFixed(2)}–${high.toFixed(2)}×`;
  return `middle half ${span(quantile(finite, 0.25), quantile(finite, 0.75))}, all ${span(Math.min(...finite), Math.max(...finite))}`;
}

/** Rotates `items` by `round`, so no contender always runs first (or right after the same one). */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const shift = round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

export function fmtInt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–';
}

export function fmtFixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '–';
}

export function fmtRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '–';
}

export function fmtMs(value: number): string {
  if (!Number.isFinite(value)) return '–';
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

/**
 * A plain-text table (also valid Markdown). The first column is left-aligned
 * and the others right-aligned, unless `align` says otherwise.
 */
export function table(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly ('left' | 'right')[] = headers.map((_, i) => (i === 0 ? 'left' : 'right')),
): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const left = (i: number): boolean => align[i] !== 'right';
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (left(i) ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (left(i) ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
