/** @module admin-reply — the admin API's replies (success with data, or a result's code and message) and its `user` parameter. */
import type { ResultName } from '../../domain/result-codes.ts';
import type { ApplyResult } from '../../engine/engine.ts';
import { errorBody } from '../edge/refusal.ts';
import { param, type ApiReply, type ApiRequest, type VenuePort } from '../http/types.ts';

/** An admin refusal: the edge's one error body `{code, message}` (edge/refusal.ts). */
export const fail = (result: ResultName, message?: string): ApiReply => ({
  json: errorBody(result, message),
});

/** Success with `data`, or the engine's refusal. */
export const fromResult = (r: ApplyResult, data: Record<string, unknown> = {}): ApiReply =>
  r.result === 'OK' ? { json: { code: 1000, message: 'success', ...data } } : fail(r.result, r.message);

/** The user the `user` parameter names, or USER_NOT_FOUND. */
export function userOf(venue: VenuePort, request: ApiRequest): number | ApiReply {
  const name = param(request, 'user') ?? '';
  const userId = venue.engine.userId(name);
  return userId ?? fail('USER_NOT_FOUND', `no user named '${name}'`);
}
