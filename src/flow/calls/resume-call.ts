/**
 * The client's `resume()` around one pass (resume-pass.ts): the caller's own
 * `onOutcome` error passed on untouched, any other rejection (the pass's
 * first listing of the store) as a store error. Loaded with `import()`
 * with the pass, on the client's first `resume()` (assembly.ts); what it
 * uses of the client comes in `kit` and `beforeSending`.
 */
import type { ClientCore } from './core.js';
import type { ResumeSummary } from './resume.js';
import type { ResumeKit } from './resume-kit.js';
import { type ResumePassOptions, resumePass } from './resume-pass.js';
import type { beforeSending } from './store-failure.js';

type BeforeSending = typeof beforeSending;

/**
 * A pass drives each operation through `guarded` (never rejects), so what
 * rejects is its first listing of the store, before anything was driven,
 * or the caller's own `onOutcome` error, passed on untouched.
 */
export function resumeCall(
  kit: ResumeKit,
  beforeSending: BeforeSending,
  core: ClientCore,
  options: ResumePassOptions,
): Promise<ResumeSummary> {
  const onOutcome = options.onOutcome;
  let own: { error: unknown } | undefined;
  const tagged: ResumePassOptions = { ...options };
  if (onOutcome !== undefined) {
    tagged.onOutcome = async (outcome) => {
      try {
        await onOutcome(outcome);
      } catch (error) {
        own = { error };
        throw error;
      }
    };
  }
  return resumePass(kit, core, tagged).catch((error: unknown) =>
    own?.error === error ? Promise.reject(error) : beforeSending(undefined, Promise.reject(error)),
  );
}
