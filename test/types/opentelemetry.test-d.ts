/**
 * Type tests: `instrument` takes every oncely client (the core's, the
 * browser's, the service worker's drainer client) and its options are typed.
 * Checked by `npm run typecheck`; vitest never executes this file.
 */
import { expectTypeOf } from 'vitest';
import type { BrowserClient } from '../../src/browser/api.js';
import type { OncelyClient } from '../../src/index.js';
import { type InstrumentOptions, instrument } from '../../src/opentelemetry.js';

declare const core: OncelyClient;
declare const browser: BrowserClient;

expectTypeOf(instrument(core)).toEqualTypeOf<() => void>();
expectTypeOf(instrument(browser, { propagate: true })).toEqualTypeOf<() => void>();
expectTypeOf<InstrumentOptions['propagate']>().toEqualTypeOf<boolean | undefined>();
// @ts-expect-error propagate is a boolean
instrument(core, { propagate: 'yes' });
