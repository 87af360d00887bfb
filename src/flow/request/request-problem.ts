/**
 * A request check that failed, as the checks throw it: the field it names
 * and which text says why. The checks stay synchronous and cheap; the text
 * (request-texts.ts) is loaded with `import()` only on the rejection path,
 * where `prepareOperation` turns the problem into the `InvalidRequestError`
 * a caller gets. If that chunk cannot load (a page gone offline), the caller
 * still gets an `InvalidRequestError` naming the field (code
 * `invalid_request`: nothing was stored or sent), its message saying which
 * check refused it.
 */
import { InvalidRequestError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import type { RequestTextId } from './request-texts.js';

export class RequestProblem {
  constructor(
    readonly field: string,
    readonly text: RequestTextId,
    readonly detail: string,
  ) {}
}

/** Refuses the request: `field` is wrong, for the reason `text` names (`detail` fills it in). */
export function refuse(field: string, text: RequestTextId, detail: string | number = ''): never {
  throw new RequestProblem(field, text, String(detail));
}

/** `error` as the caller's `InvalidRequestError` when it is a `RequestProblem`; else `error`. */
export async function asRequestError(error: unknown, runtime: Pick<Runtime, 'track'>): Promise<unknown> {
  if (!(error instanceof RequestProblem)) return error;
  const { field, text, detail } = error;
  try {
    const { requestText } = await runtime.track(import('./request-texts.js'));
    return new InvalidRequestError(field, requestText(text, detail));
  } catch {
    return new InvalidRequestError(field, `refused (${text}${detail === '' ? '' : `: ${detail}`})`);
  }
}
