/**
 * What the error of an interrupted operation says (interruption.ts): its
 * message and next step, by kind and verdict. Loaded with `import()` the
 * first time an operation is interrupted; it imports only types, so it
 * shares no chunk with the client.
 */
import type { Interruption } from './interruption.js';

export function interruptionText(v: Interruption): { message: string; remediation: string } {
  const { key, maybe } = v;
  switch (v.kind) {
    case 'interrupted':
      return {
        message: maybe
          ? `Operation ${key} may have taken effect: an attempt may have reached the server before this failed: ${v.why}`
          : `Operation ${key} was interrupted: ${v.why}`,
        remediation: maybe
          ? 'It may have taken effect; it stays stored: resume() finishes it with the same key. Do not send it again under a new key.'
          : 'It stays stored: resume() finishes it with the same key once the cause is fixed.',
      };
    case 'removed':
      return {
        message: `Operation ${key} was removed from the store before it settled`,
        remediation: maybe
          ? 'An attempt may have taken effect (this client no longer had the operation to itself): look it up at the provider by its key, and never send it again under a new key'
          : 'No attempt of it reached the server: nothing was done',
      };
    case 'held':
      return {
        message: `Operation ${key} was not started: ${v.head ?? 'the operation'} ahead of it in scope ${v.scope ?? ''} failed before it settled`,
        remediation: maybe
          ? 'It may have taken effect; it stays stored: resume() drives its scope again in order, same key. Do not send it again under a new key.'
          : 'Nothing of it was sent; it stays stored: resume() drives its scope again in order, same key.',
      };
  }
}
