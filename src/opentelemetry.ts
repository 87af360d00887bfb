/**
 * oncely/opentelemetry — traces and metrics for an oncely client, on
 * `@opentelemetry/api` alone (an optional peer dependency; it records
 * nothing until the application registers an SDK). See docs/opentelemetry.md.
 */
export type { InstrumentableClient } from './opentelemetry/instrument.js';
export { instrument } from './opentelemetry/instrument.js';
export type { InstrumentOptions } from './opentelemetry/options.js';
