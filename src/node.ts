/**
 * oncely/node — everything in `oncely`, plus what needs Node.js.
 */
export * from './index.js';
