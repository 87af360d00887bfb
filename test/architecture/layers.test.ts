/**
 * The import direction of `src/`: each module imports only from its own layer
 * or the layers below it, so the vocabulary never depends on the flow, the
 * flow never on a client, and no core module on a platform.
 *
 *   model  ←  policy  ←  store contract  ←  flow  ←  client  ←  platform entries
 *
 * A module's layer follows from its path (`layerOf`); a new directory must be
 * placed here before it can be imported from anywhere (the test fails on an
 * unplaced module rather than guess).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const LAYERS = ['model', 'policy', 'store', 'flow', 'client', 'platform'] as const;
type Layer = (typeof LAYERS)[number];

/** Which layer a module (path relative to `src/`, `/`-separated) belongs to. */
function layerOf(path: string): Layer | undefined {
  if (path === 'model.ts' || path.startsWith('model/')) return 'model';
  if (path === 'errors.ts' || path === 'events.ts' || path === 'runtime.ts') return 'model';
  if (path.startsWith('policy/') || path === 'options.ts') return 'policy';
  if (path === 'store/store.ts' || path === 'store/memory.ts' || path === 'store/tracked.ts') return 'store';
  if (path.startsWith('flow/')) return 'flow';
  if (path === 'client.ts' || path === 'client-api.ts') return 'client';
  if (/^(index|browser|node|testing|store|postgres|server)\.ts$/.test(path)) return 'platform';
  if (/^(browser|cli|node|testing|store|server)\//.test(path)) return 'platform';
  return undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports (static, dynamic and `export … from`) of one module, as paths relative to `src/`. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) =>
      relative(SRC, resolve(dirname(file), spec))
        .replaceAll('\\', '/')
        .replace(/\.js$/, '.ts'),
    );
}

const rank = (layer: Layer) => LAYERS.indexOf(layer);

/** Every import that goes to a higher (or unplaced) layer, as `from (layer) → to (layer)`. */
function upwardImports(graph: Record<string, string[]>): string[] {
  const upward: string[] = [];
  for (const [file, targets] of Object.entries(graph)) {
    const own = layerOf(file);
    if (own === undefined) continue;
    for (const target of targets) {
      const theirs = layerOf(target);
      if (theirs === undefined || rank(theirs) > rank(own)) upward.push(`${file} (${own}) → ${target} (${theirs})`);
    }
  }
  return upward;
}

describe('import direction', () => {
  const files = sourceFiles(SRC).map((file) => relative(SRC, file).replaceAll('\\', '/'));

  it('places every module of src/ in a layer', () => {
    expect(files.filter((file) => layerOf(file) === undefined)).toEqual([]);
    expect(files.length).toBeGreaterThan(50);
  });

  it('never imports from a layer above', () => {
    const graph = Object.fromEntries(files.map((file) => [file, importsOf(join(SRC, file))]));
    expect(Object.values(graph).flat().length).toBeGreaterThan(200);
    expect(upwardImports(graph)).toEqual([]);
  });

  it('reports an upward import (the rule can fail)', () => {
    expect(
      upwardImports({
        'model/schema.ts': ['model/vocabulary.ts', 'flow/decide.ts'],
        'flow/run.ts': ['client.ts', 'store/store.ts'],
        'client.ts': ['browser/drain-loop.ts', 'flow/run.ts'],
        'store/memory.ts': ['store/file/store.ts'],
      }),
    ).toEqual([
      'model/schema.ts (model) → flow/decide.ts (flow)',
      'flow/run.ts (flow) → client.ts (client)',
      'client.ts (client) → browser/drain-loop.ts (platform)',
      'store/memory.ts (store) → store/file/store.ts (platform)',
    ]);
  });
});
