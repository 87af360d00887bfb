/**
 * A load that waits to be let through: a mocked module's factory calls
 * `begin()` and awaits `released`; the test awaits `begun`, does what a slow
 * network lets happen meanwhile, then calls `release()`. No imports, so a
 * test file can make one inside `vi.hoisted`.
 *
 * @example
 * const load = await vi.hoisted(async () => (await import('../helpers/held-load.js')).heldLoad());
 * vi.mock('../../src/flow/drive/next-step.js', async (original) => {
 *   load.begin();
 *   await load.released;
 *   return original();
 * });
 */
export interface HeldLoad {
  begun: Promise<void>;
  released: Promise<void>;
  begin(): void;
  release(): void;
}

export function heldLoad(): HeldLoad {
  let begin: () => void = () => undefined;
  let release: () => void = () => undefined;
  return {
    begun: new Promise<void>((resolve) => {
      begin = resolve;
    }),
    released: new Promise<void>((resolve) => {
      release = resolve;
    }),
    begin: () => begin(),
    release: () => release(),
  };
}
