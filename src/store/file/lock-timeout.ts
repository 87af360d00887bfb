/** The error of a file store call that waited too long for another process's claim (claim.ts). */
import { OncelyError } from '../../errors.js';

/**
 * The file store waited `lockTimeoutMs` for another live process that holds
 * the same record and gave up. Nothing was written; the call can be repeated.
 */
export class LockTimeoutError extends OncelyError {
  override name = 'LockTimeoutError' as const;
  declare readonly code: 'lock_timeout';
  /** The claim file waited for. */
  readonly path: string;
  constructor(path: string, timeoutMs: number, holder: string) {
    super(
      'lock_timeout',
      `Timed out after ${timeoutMs} ms waiting for ${path}, held by ${holder}; nothing was written. ` +
        'A hold normally lasts one write: check what that process is doing, then try again, or raise `lockTimeoutMs`.',
      { remediation: 'Nothing was written: try again, or raise `lockTimeoutMs`.' },
    );
    this.path = path;
  }
}
