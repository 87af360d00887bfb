/**
 * Per-user queues (the `user` option): new operations carry `meta.userId`,
 * and only the signed-in user's operations are sent, so one user's queue is
 * never sent with another user's credentials.
 */
import type { OncelyRequest } from '../flow/request/operation.js';
import type { OperationRecord } from '../model.js';

export interface UserScope {
  current(): string | undefined;
  /** Whether `record` may be sent now: every record when no `user` is configured. */
  sendable(record: OperationRecord): boolean;
  /** `request` with `meta.userId` of the current user, unless it names one. */
  stamped<T>(request: OncelyRequest<T>): OncelyRequest<T>;
}

export function userScope(user: (() => string | undefined) | undefined): UserScope {
  const current = (): string | undefined => user?.();
  return {
    current,
    sendable: (record) => user === undefined || record.meta?.userId === current(),
    stamped(request) {
      const userId = current();
      if (userId === undefined || typeof request !== 'object' || request === null) return request;
      if (request.meta?.userId !== undefined) return request;
      return { ...request, meta: { ...request.meta, userId } };
    },
  };
}
