/**
 * The endpoint rule's part in reconciling `unknown` operations: the hook's
 * contract (what it is told, what it may answer), the provider id read from
 * answers, and the schedule of rechecks. Plain types and pure functions; the
 * decision on a verdict is flow/decide/reconcile.ts, the loop that asks is
 * flow/drive/reconcile.ts.
 */
import type { OperationRecord } from '../model.js';

/** What a `reconcile` hook is told about the operation it must look up. */
export interface ReconcileContext {
  /** The idempotency key (the provider may have forgotten it: see `withinKeyRetention`). */
  key: string;
  /** The stable reference minted with the operation (or given with the request): search the provider by it. */
  reference: string | undefined;
  /** Ids the provider gave in any answer to this operation (see the rule's `providerId`), oldest first. */
  providerIds: string[];
  method: string;
  url: string;
  /** Creation time (ms since the epoch, on the client's clock). */
  createdAt: number;
  /** Checks made before this one. */
  checks: number;
  /** The provider still remembers the key: a resend with it (`retry(key)`) would be answered by a replay. */
  withinKeyRetention: boolean;
  /** The operation as stored (read only). */
  record: Readonly<OperationRecord>;
}

/**
 * A hook's verdict. `applied: false` means "never took effect, and never
 * will": the operation ends `failed` and the app may send it again as a new
 * operation, so say it only when the provider is sure (a search by metadata
 * can lag behind; see docs/reconcile.md).
 */
export type ReconcileAnswer =
  | { applied: true; result?: ReconciledResult | undefined }
  | { applied: false }
  | { applied: 'unknown' };

/** The result kept for an operation found applied: what `send` resolves with (`status` 200 unless given). */
export interface ReconciledResult {
  status?: number;
  headers?: Record<string, string>;
  /** Plain JSON. */
  data?: unknown;
}

export type ReconcileHook = (context: ReconcileContext) => ReconcileAnswer | Promise<ReconcileAnswer>;

/** An answer the `providerId` extractor reads: its status, headers and body (JSON parsed, text as text). */
export interface ProviderAnswer {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}

/** How often an operation the hook left `unknown` is looked at again. */
export interface RecheckSettings {
  /** Checks in all, the first included; past them the operation stays `unknown` with no check due. */
  maxChecks: number;
  /** Wait before the second check; doubled for each check after it. */
  delayMs: number;
  maxDelayMs: number;
}

/**
 * When check number `checks + 1` is due, `checks` having been made (the last
 * at `nowMs`); undefined once `maxChecks` are spent. Doubling from
 * `delayMs`: a provider's search catches up within minutes, rarely an hour.
 */
export function nextCheckAt(settings: RecheckSettings, checks: number, nowMs: number): number | undefined {
  if (checks >= settings.maxChecks) return undefined;
  return nowMs + Math.min(settings.maxDelayMs, settings.delayMs * 2 ** Math.max(0, checks - 1));
}

/** A hook's answer, checked: the verdict, or why it is not one (the check then counts as `unknown`). */
export function readAnswer(answer: unknown): ReconcileAnswer | { invalid: string } {
  const applied = (answer as { applied?: unknown } | null | undefined)?.applied;
  if (applied === true) {
    const result = (answer as { result?: unknown }).result;
    if (result !== undefined && (typeof result !== 'object' || result === null)) {
      return { invalid: 'reconcile answered { applied: true } with a `result` that is not an object' };
    }
    const status = (result as ReconciledResult | undefined)?.status;
    if (status !== undefined && !(Number.isInteger(status) && status >= 200 && status < 300)) {
      return {
        invalid: `reconcile answered { applied: true } with result.status ${String(status)} (a 2xx is required)`,
      };
    }
    return answer as ReconcileAnswer;
  }
  if (applied === false || applied === 'unknown') return answer as ReconcileAnswer;
  let shown: string;
  try {
    shown = JSON.stringify(answer) ?? String(answer);
  } catch {
    shown = String(answer);
  }
  return { invalid: `reconcile answered ${shown}; expected { applied: true | false | 'unknown' }` };
}
