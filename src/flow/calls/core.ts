/**
 * The parts of one client, built once by `createClient` and shared by the
 * calls that need more than one of them (`send`, `enqueue`, `resume`).
 */

import type { Loops } from '../drive/loops.js';
import type { Engine } from '../engine/engine.js';
import type { Admission } from './admission.js';
import type { Remediation } from './remediation.js';

export interface ClientCore {
  /** Store, runtime, owner, transport, rules, gates, events and hooks: what the loop works with. */
  readonly engine: Engine;
  readonly admission: Admission;
  readonly loops: Loops;
  readonly remediation: Remediation;
  /** Operations `resume()` drives at once. */
  readonly concurrency: number;
}
