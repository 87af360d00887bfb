/**
 * Every subpath export resolves through the package's own `exports` map (as
 * a user's `import 'oncely/...'` would) to a built module with its types.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  name: string;
  type: string;
  sideEffects: boolean;
  engines: { node: string };
  exports: Record<string, string | { types: string; default: string }>;
};

describe('package exports', () => {
  it('is an ESM package without side effects, for the Node versions tested (20 and 22, with require(esm))', () => {
    expect(pkg.name).toBe('oncely');
    expect(pkg.type).toBe('module');
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    expect(Object.keys(pkg.exports).sort()).toEqual([
      '.',
      './browser',
      './node',
      './opentelemetry',
      './package.json',
      './postgres',
      './server',
      './service-worker',
      './store',
      './tanstack-query',
      './testing',
    ]);
  });

  it.each([
    '.',
    './browser',
    './node',
    './opentelemetry',
    './postgres',
    './server',
    './service-worker',
    './store',
    './tanstack-query',
    './testing',
  ])('%s points at built JS and types that exist', (subpath) => {
    const target = pkg.exports[subpath];
    expect(typeof target).toBe('object');
    if (typeof target !== 'object') return;
    expect(existsSync(`${root}${target.default}`)).toBe(true);
    expect(existsSync(`${root}${target.types}`)).toBe(true);
  });

  // The runtime names of each entry, exactly: a name added or removed is an
  // API change and must show up here (types are not runtime names).
  const CORE = [
    'CorruptRecordError',
    'InvalidOptionsError',
    'InvalidRequestError',
    'InvalidStateError',
    'KeyConflictError',
    'NotFoundError',
    'OncelyError',
    'OperationError',
    'ResponseParseError',
    'ResponseValidationError',
    'createClient',
    'defineProfile',
    'deriveKey',
    'hasErrorCode',
    'ietfProfile',
    'isOncelyError',
    'memoryStore',
    'stripeProfile',
  ];
  const RUNTIME_NAMES: Record<string, string[]> = {
    oncely: CORE,
    'oncely/browser': [...CORE, 'browserConnectivity', 'createBrowserClient', 'indexedDbStore'],
    'oncely/node': [...CORE, 'LockTimeoutError', 'OwnedStoreError', 'fileStore'],
    'oncely/store': [
      'ATTEMPT_CLASSES',
      'OPERATION_STATES',
      'RECORD_VERSION',
      'STOP_REASONS',
      'applyFilter',
      'parseRecord',
      'sampleRecord',
      'storeContract',
      'summaryOf',
    ],
    'oncely/testing': [
      'CONFORMANCE_RULES',
      'createFakeRuntime',
      'seededRandom',
      'serverConformance',
      'startReferenceServer',
    ],
    'oncely/postgres': [
      'IDEMPOTENCY_MIGRATIONS',
      'IDEMPOTENCY_SCHEMA_VERSION',
      'MIGRATIONS',
      'SCHEMA_VERSION',
      'postgresIdempotencyStore',
      'postgresStore',
    ],
    'oncely/server': [
      'LeaseTakenOverError',
      'MemoryIdempotencyStore',
      'PROBLEM_TYPES',
      'idempotency',
      'memoryIdempotencyStore',
    ],
    'oncely/service-worker': [...CORE, 'createServiceWorkerDrainer'],
    'oncely/tanstack-query': ['OUTBOX_STATES', 'createMutationHandlers', 'mutationOptions', 'outboxQueryOptions'],
    'oncely/opentelemetry': ['instrument'],
  };

  it.each(Object.entries(RUNTIME_NAMES))('import("%s") exposes exactly its runtime names', async (specifier, names) => {
    // Self-reference: Node resolves the package's own name through `exports`.
    const mod = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
    expect(Object.keys(mod).sort()).toEqual([...names].sort());
    for (const name of names) expect(mod[name], `${specifier} → ${name}`).toBeDefined();
  });

  it('no entry exposes the loop internals', async () => {
    const internals = ['classify', 'decide', 'HostGate', 'LeaseLostError', 'backoffDelayMs', 'fingerprintOf'];
    for (const specifier of Object.keys(RUNTIME_NAMES)) {
      const mod = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
      expect(
        internals.filter((name) => name in mod),
        specifier,
      ).toEqual([]);
    }
  });

  it('LockTimeoutError (oncely/node) is an OncelyError with a stable code and says what to do', async () => {
    const specifier = 'oncely/node';
    // Through the built entry; typed from the source it is built from.
    const node = (await import(/* @vite-ignore */ specifier)) as typeof import('../../src/node.js');
    const error = new node.LockTimeoutError('/data/k1.claim', 30_000, 'pid 42 (host h)');
    expect(error).toBeInstanceOf(node.OncelyError);
    expect(node.isOncelyError(error)).toBe(true);
    expect(node.hasErrorCode(error, 'lock_timeout')).toBe(true);
    expect(error.name).toBe('LockTimeoutError');
    expect(error.path).toBe('/data/k1.claim');
    expect(error.message).toContain('held by pid 42 (host h)');
    expect(error.message).toContain('lockTimeoutMs');
  });

  it('package.json is exported', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(`${root}package.json`);
    expect(require.resolve('oncely/package.json')).toBe(`${root}package.json`);
  });
});
