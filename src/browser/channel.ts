/**
 * Messages between the tabs of one origin that share a database, over a
 * `BroadcastChannel`. They are hints only, never the truth: the store is.
 * A tab that misses a message still learns everything by polling the store
 * (so a browser without BroadcastChannel works, only a little slower).
 *
 * - `kick`: a tab wrote an operation ahead; the drainer should look.
 * - `event`: a client event of the sending tab (attempts, settlements…),
 *   so waiting tabs wake up and every tab's live view refreshes.
 * - `changed`: the store changed outside the loop (`clear()`, `discard`).
 * - `wiped`: a tab found the database wiped (the others would not notice:
 *   the markers are already renewed when they look).
 */
import type { OncelyEventName, OncelyEvents } from '../events.js';
import type { BroadcastChannelLike } from './env.js';
import type { WipeReport } from './persistence.js';

export type TabMessage =
  | { type: 'kick'; from: string }
  | { type: 'changed'; from: string }
  | { type: 'wiped'; from: string; report: WipeReport }
  | { [E in OncelyEventName]: { type: 'event'; from: string; name: E; payload: OncelyEvents[E] } }[OncelyEventName];

/** The core events a tab relays to the others (`event` messages). */
export const RELAYED_EVENTS: readonly OncelyEventName[] = [
  'enqueued',
  'attempt:started',
  'attempt:ended',
  'retry:scheduled',
  'held',
  'settled',
  'reconciled',
  'quarantined',
];

export interface TabChannel {
  /** False when the browser has no BroadcastChannel (tabs then rely on polling). */
  readonly available: boolean;
  post(message: TabMessage): void;
  close(): void;
}

export function openTabChannel(
  ctor: BroadcastChannelLike | undefined,
  name: string,
  self: string,
  onMessage: (message: TabMessage) => void,
): TabChannel {
  if (ctor === undefined) return { available: false, post: () => undefined, close: () => undefined };
  const channel = new ctor(name);
  channel.onmessage = (event: MessageEvent) => {
    const message = event.data as TabMessage | undefined;
    if (typeof message !== 'object' || message === null || message.from === self) return;
    onMessage(message);
  };
  let open = true;
  return {
    available: true,
    post(message) {
      if (!open) return;
      try {
        channel.postMessage(message);
      } catch {
        // A payload that cannot be cloned: the store still tells the truth.
      }
    },
    close() {
      open = false;
      channel.onmessage = null;
      channel.close();
    },
  };
}
