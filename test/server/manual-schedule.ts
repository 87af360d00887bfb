/**
 * A `schedule` for the guard's lease renewals that fires only when the test
 * says so: `fire()` runs every call due by the test's clock. The default of
 * the fixtures is never to fire, so a held handler stands for a process
 * that died (no one renews its claim), as the crash rows of the contract
 * need; the renewal tests fire it as virtual time passes.
 */
import type { IdempotencyOptions } from '../../src/server.js';

export interface ManualSchedule {
  schedule: NonNullable<IdempotencyOptions['schedule']>;
  /** Calls scheduled and not yet fired nor cancelled. */
  readonly pending: number;
  /** Fires every call due at `now` (and those they schedule, when due too), letting each renewal settle. */
  fire(now: number): Promise<void>;
}

export function manualSchedule(clock: { now: number }): ManualSchedule {
  const calls = new Set<{ at: number; fn: () => void }>();
  return {
    schedule(ms, fn) {
      const call = { at: clock.now + ms, fn };
      calls.add(call);
      return () => {
        calls.delete(call);
      };
    },
    get pending() {
      return calls.size;
    },
    async fire(now) {
      for (;;) {
        const due = [...calls].filter((c) => c.at <= now).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) return;
        calls.delete(due);
        due.fn();
        // A renewal is a store call: let it land before the next one.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    },
  };
}
