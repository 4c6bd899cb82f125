/** @module reply — the HTTP reply of a refusal: the one error body (edge/refusal.ts) as JSON, HTTP 200. */
import type { ResultName } from '../../domain/result-codes.ts';
import { errorBody, errorText } from '../edge/refusal.ts';
import type { ApiReply } from './types.ts';

/**
 * The error reply of a result: `{"code":<wire code>,"message":<text>}`, sent with HTTP 200 as the
 * real API did (zb-api-facts §2). `message` replaces the registry's default text; give one that
 * names the parameter or limit at fault.
 */
export function errorReply(result: ResultName, message?: string): ApiReply {
  return { json: errorBody(result, message) };
}

/** `errorReply` as pre-serialized text (the public endpoints' replies are text or bytes). */
export function resultReply(result: ResultName, message?: string): ApiReply {
  return { text: errorText(result, message) };
}
