/**
 * oncely/browser — everything in `oncely`, plus what needs a browser.
 */
export * from './index.js';
