/** The reference server's options with their defaults filled in. */
import type { Profile } from './responses.js';
import type { ReferenceRequest, ReferenceResponse, ReferenceServerOptions, ServerRuntime } from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Settings {
  keyHeader: string;
  profile: Profile;
  keyRetentionMs: number;
  now: () => number;
  requireKey: boolean;
  authorize: ((authorization: string | undefined) => boolean) | undefined;
  handle: (req: ReferenceRequest) => ReferenceResponse | Promise<ReferenceResponse>;
  runtime: ServerRuntime | undefined;
}

/** Default business effect: echo the JSON body under a fresh id, like a create endpoint. */
function defaultHandle(req: ReferenceRequest): ReferenceResponse {
  const fields = isPlainObject(req.body) ? req.body : {};
  return { status: 201, body: { id: `res_${req.effectNumber}`, ...fields } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function resolveSettings(options: ReferenceServerOptions): Settings {
  return {
    keyHeader: options.keyHeader ?? 'Idempotency-Key',
    profile: options.profile ?? 'ietf',
    keyRetentionMs: options.keyRetentionMs ?? DAY_MS,
    now: options.now ?? options.runtime?.now ?? Date.now,
    runtime: options.runtime,
    requireKey: options.requireKey ?? true,
    authorize: options.authorize,
    handle: options.handle ?? defaultHandle,
  };
}
