/**
 * Type tests for what a caller narrows (issue 32, item 1): `Outcome` is
 * discriminated by `ok`, each error class has a literal `name`, and
 * `isOncelyError` narrows to a type whose actionable fields are readable.
 *
 * Checked by `npm run typecheck` (tsconfig.json includes test/), which
 * `npm test` runs; vitest never executes this file (`*.test-d.ts` matches no
 * test project). An `@ts-expect-error` that stops erroring fails the check.
 */
import { expectTypeOf } from 'vitest';
import {
  hasErrorCode,
  type InvalidOptionsError,
  isOncelyError,
  type KeyConflictError,
  type OncelyClient,
  type OncelyErrorCode,
  type OperationError,
  type OperationState,
  type Outcome,
  type ProviderError,
  type ResponseValidationError,
} from '../../src/index.js';

declare const client: OncelyClient;
declare const outcome: Outcome<{ id: string }>;

// `if (o.ok) o.result.data` compiles without `!` (it was TS18048: `result` optional).
if (outcome.ok) {
  expectTypeOf(outcome.result.data).toEqualTypeOf<{ id: string }>();
  expectTypeOf(outcome.state).toEqualTypeOf<'succeeded'>();
  expectTypeOf(outcome.error).toEqualTypeOf<undefined>();
} else {
  expectTypeOf(outcome.result).toEqualTypeOf<undefined>();
  // Always an oncely error, never a bare `Error`.
  expectTypeOf(outcome.error.code).toEqualTypeOf<OncelyErrorCode>();
  expectTypeOf(outcome.error.remediation).toEqualTypeOf<string>();
  expectTypeOf(outcome.error.mayHaveTakenEffect).toEqualTypeOf<boolean | undefined>();
  expectTypeOf(outcome.state).toEqualTypeOf<OperationState>();
  if (outcome.error.code === 'operation_failed') {
    expectTypeOf(outcome.error.mayHaveTakenEffect).toEqualTypeOf<boolean>();
    expectTypeOf(outcome.error.providerError).toEqualTypeOf<ProviderError | undefined>();
  }
}
// @ts-expect-error `result` may be absent until `ok` is checked.
void outcome.result.data;

// The same for what the client's calls resolve with.
void (async () => {
  const o = await (await client.enqueue<{ id: string }>({ method: 'POST', url: '/p', json: {} })).settled;
  if (o.ok) expectTypeOf(o.result.data).toEqualTypeOf<{ id: string }>();
  const r = await client.retry('k');
  if (!r.ok) expectTypeOf(r.error.key).toEqualTypeOf<string | undefined>();
  await client.resume({
    onOutcome: (each) => {
      if (!each.ok) expectTypeOf(each.error.message).toEqualTypeOf<string>();
    },
  });
})();

// Literal names, as the README promises.
expectTypeOf<OperationError['name']>().toEqualTypeOf<'OperationError'>();
expectTypeOf<KeyConflictError['name']>().toEqualTypeOf<'KeyConflictError'>();
expectTypeOf<InvalidOptionsError['name']>().toEqualTypeOf<'InvalidOptionsError'>();
expectTypeOf<ResponseValidationError['name']>().toEqualTypeOf<'ResponseValidationError'>();
expectTypeOf<OperationError['code']>().toEqualTypeOf<'operation_failed'>();

// `isOncelyError` narrows: the fields a caller acts on are readable at once, exact after a `code` or `name` check.
declare const caught: unknown;
if (isOncelyError(caught)) {
  expectTypeOf(caught.mayHaveTakenEffect).toEqualTypeOf<boolean | undefined>();
  expectTypeOf(caught.providerError).toEqualTypeOf<ProviderError | undefined>();
  expectTypeOf(caught.response).not.toBeAny();
  if (caught.name === 'OperationError') expectTypeOf(caught.mayHaveTakenEffect).toEqualTypeOf<boolean>();
  if (caught.code === 'key_conflict') expectTypeOf(caught).toMatchTypeOf<KeyConflictError>();
  if (caught.code === 'response_invalid') expectTypeOf(caught.issues).toEqualTypeOf<readonly string[]>();
  if (caught.code === 'lock_timeout') expectTypeOf(caught.path).toEqualTypeOf<string>();
  // An abort rejects as fetch does, as a DOMException carrying the oncely fields.
  if (caught.name === 'AbortError' || caught.name === 'TimeoutError') {
    expectTypeOf(caught).toMatchTypeOf<Omit<DOMException, 'code'>>();
    expectTypeOf(caught.mayHaveTakenEffect).toEqualTypeOf<boolean>();
  }
}
if (hasErrorCode(caught, 'operation_failed')) expectTypeOf(caught.mayHaveTakenEffect).toEqualTypeOf<boolean>();
