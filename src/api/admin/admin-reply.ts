/**
 * @module admin-reply — the admin API's replies and refusals. A route refuses by throwing the
 * signed API's `Refusal` (`fail`, or a reader that fails); `answering` turns it into the
 * interface's `{code, message}` body, in this one place for every admin route (issue 32).
 */
import type { ResultName } from '../../domain/result-codes.ts';
import type { ApplyResult } from '../../engine/engine.ts';
import { refuse, Refusal, successBody } from '../edge/refusal.ts';
import { errorReply } from '../http/reply.ts';
import { param, type ApiReply, type ApiRequest, type RouteHandler, type VenuePort } from '../http/types.ts';

/** Throws the admin refusal `{code, message}` with the result's wire code. */
export function fail(result: ResultName, message?: string): never {
  return refuse(result, message);
}

/** Success with `data`. */
export const ok = (data: Record<string, unknown> = {}): ApiReply => ({
  json: successBody(data),
});

/** Success with `data`; the engine's refusal is thrown. */
export function fromResult(r: ApplyResult, data: Record<string, unknown> = {}): ApiReply {
  if (r.result !== 'OK') fail(r.result, r.message);
  return ok(data);
}

/** The handler with its refusals answered: the one place an admin Refusal becomes a reply. */
export const answering =
  (handler: RouteHandler): RouteHandler =>
  async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      if (error instanceof Refusal) return errorReply(error.result, error.message);
      throw error;
    }
  };

/** The user the `user` parameter names, or USER_NOT_FOUND. */
export function userOf(venue: VenuePort, request: ApiRequest): number {
  const name = param(request, 'user') ?? '';
  const userId = venue.engine.userId(name);
  return userId ?? fail('USER_NOT_FOUND', `no user named '${name}'`);
}
