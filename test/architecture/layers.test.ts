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
 *
 * Inside the flow, the same rule holds between its stages (one folder each),
 * so the pure decisions never depend on the loop that acts on them and the
 * loop never on the public calls:
 *
 *   request  ←  decide  ←  transport  ←  engine  ←  drive  ←  calls
 *
 * A module of flow/ belongs to the stage its folder names (`stageOf`); a
 * file directly in flow/ or in an unlisted folder fails the test.
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
  if (path === 'store/store.ts' || path === 'store/tracked.ts') return 'store';
  // The memory store (its core, the kit handed to it, its frozen copies, its lazy load): platform-free.
  if (/^store\/(memory|memory-core|memory-kit|memory-load|frozen)\.ts$/.test(path)) return 'store';
  // Packed listings (any store, and the resume pass): platform-free, like the contract.
  if (/^store\/packed-(strings|summaries|listing)\.ts$/.test(path)) return 'store';
  if (path.startsWith('flow/')) return 'flow';
  if (path === 'client.ts' || path === 'client-api.ts') return 'client';
  if (/^(index|browser|node|testing|store|postgres|server|service-worker|tanstack-query|opentelemetry)\.ts$/.test(path))
    return 'platform';
  if (/^(browser|cli|node|testing|store|server|service-worker|tanstack-query|opentelemetry)\//.test(path)) {
    return 'platform';
  }
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

const STAGES = ['request', 'decide', 'transport', 'engine', 'drive', 'calls'] as const;
type Stage = (typeof STAGES)[number];

/** Which stage of the flow a module (path relative to `src/`) belongs to; undefined outside flow/ or unplaced. */
function stageOf(path: string): Stage | undefined {
  const folder = /^flow\/([^/]+)\/[^/]+\.ts$/.exec(path)?.[1];
  return STAGES.find((stage) => stage === folder);
}

/** Every import from one stage of the flow to a later (or unplaced) one, as `from (stage) → to (stage)`. */
function backwardStageImports(graph: Record<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of Object.entries(graph)) {
    const own = stageOf(file);
    if (own === undefined) continue;
    for (const target of targets) {
      if (!target.startsWith('flow/')) continue;
      const theirs = stageOf(target);
      if (theirs === undefined || STAGES.indexOf(theirs) > STAGES.indexOf(own)) {
        found.push(`${file} (${own}) → ${target} (${theirs})`);
      }
    }
  }
  return found;
}

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
        'model/schema.ts': ['model/vocabulary.ts', 'flow/decide/decide.ts'],
        'flow/drive/run.ts': ['client.ts', 'store/store.ts'],
        'client.ts': ['browser/drain-loop.ts', 'flow/drive/run.ts'],
        'store/memory.ts': ['store/file/store.ts'],
      }),
    ).toEqual([
      'model/schema.ts (model) → flow/decide/decide.ts (flow)',
      'flow/drive/run.ts (flow) → client.ts (client)',
      'client.ts (client) → browser/drain-loop.ts (platform)',
      'store/memory.ts (store) → store/file/store.ts (platform)',
    ]);
  });
});

describe('import direction inside the flow', () => {
  const files = sourceFiles(SRC)
    .map((file) => relative(SRC, file).replaceAll('\\', '/'))
    .filter((file) => file.startsWith('flow/'));

  it('places every module of flow/ in a stage', () => {
    expect(files.filter((file) => stageOf(file) === undefined)).toEqual([]);
    for (const stage of STAGES)
      expect(
        files.some((file) => stageOf(file) === stage),
        stage,
      ).toBe(true);
  });

  it('never imports from a later stage', () => {
    const graph = Object.fromEntries(files.map((file) => [file, importsOf(join(SRC, file))]));
    expect(
      Object.values(graph)
        .flat()
        .filter((target) => target.startsWith('flow/')).length,
    ).toBeGreaterThan(100);
    expect(backwardStageImports(graph)).toEqual([]);
  });

  it('reports an import against the stage order (the rule can fail)', () => {
    expect(
      backwardStageImports({
        'flow/decide/decide.ts': ['flow/decide/classify.ts', 'flow/request/key.ts', 'flow/drive/drive.ts'],
        'flow/request/operation.ts': ['flow/decide/transitions.ts', 'model.ts'],
        'flow/transport/transport.ts': ['flow/engine/engine.ts'],
        'flow/drive/run.ts': ['flow/calls/settle.ts', 'flow/loose.ts'],
        'flow/calls/send.ts': ['flow/drive/run.ts', 'flow/request/operation.ts'],
      }),
    ).toEqual([
      'flow/decide/decide.ts (decide) → flow/drive/drive.ts (drive)',
      'flow/request/operation.ts (request) → flow/decide/transitions.ts (decide)',
      'flow/transport/transport.ts (transport) → flow/engine/engine.ts (engine)',
      'flow/drive/run.ts (drive) → flow/calls/settle.ts (calls)',
      'flow/drive/run.ts (drive) → flow/loose.ts (undefined)',
    ]);
    expect([stageOf('flow/loose.ts'), stageOf('flow/other/x.ts'), stageOf('client.ts')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
