/**
 * What errors carry of the server's answer: the final non-2xx response (with
 * RFC 9457 problem details when the server sent them), the provider's own
 * reading of it, and the raw 2xx result a response schema refused. Plain
 * data, so records, events and errors can share it.
 */

/**
 * RFC 9457 problem details, as sent with `Content-Type: application/problem+json`.
 * Members of the wrong type are left out, as the RFC asks; extension members
 * stay in `ErrorResponse.body`.
 */
export interface ProblemDetails {
  /** A URI naming the problem type (`about:blank` when absent). */
  type: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
}

/** The server's final non-2xx answer, as kept for the caller. */
export interface ErrorResponse {
  status: number;
  /** The response headers the policy keeps (never `Set-Cookie` and the like). */
  headers: Readonly<Record<string, string>>;
  /** Parsed JSON when the body is JSON, its text otherwise, `undefined` when empty or binary. */
  body: unknown;
  /** For `application/problem+json`: the RFC 9457 members. */
  problem?: ProblemDetails | undefined;
  /** The body was longer than `maxResponseBytes` and was cut (a cut JSON body reads as text). */
  truncated?: boolean | undefined;
}

/**
 * The provider's own reading of a refusal, extracted by the endpoint's
 * profile: what a checkout shows ("insufficient funds") and branches on.
 */
export interface ProviderError {
  /** The profile that read it (`stripe`, `ietf`, or yours). */
  profile: string;
  /** Machine-readable code: Stripe's `error.code` (`card_declined`); a problem's `type` URI. */
  code?: string | undefined;
  /** Stripe's `error.decline_code` (`insufficient_funds`). */
  declineCode?: string | undefined;
  /** Category: Stripe's `error.type` (`card_error`); a problem's `title`. */
  type?: string | undefined;
  /** Human-readable text: Stripe's `error.message`; a problem's `detail` (else `title`). */
  message?: string | undefined;
  /** The request parameter at fault, when the provider names one (Stripe's `error.param`). */
  param?: string | undefined;
}

/** A completed answer as the server sent it (before any response schema). */
export interface RawResult {
  status: number;
  /** The response headers the policy keeps. */
  headers: Readonly<Record<string, string>>;
  /** Parsed JSON, text, or bytes, as `send` would have returned as `data`. */
  body: unknown;
}
