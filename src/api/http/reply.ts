/** @module reply — building error replies from the result registry, and the JSON body of each. */
import { RESULTS, type ResultName } from '../../domain/result-codes.ts';
import type { ApiReply } from './types.ts';

/**
 * The error body of a result: `{"code":<wire code>,"message":<text>}`, sent with HTTP 200 as the
 * real API did (zb-api-facts §2). `message` replaces the registry's default text; give one that
 * names the parameter or limit at fault.
 */
export function resultReply(result: ResultName, message?: string): ApiReply {
  return { text: resultBody(result, message) };
}

/** The JSON text of `resultReply`. */
export function resultBody(result: ResultName, message?: string): string {
  return JSON.stringify({ code: RESULTS[result].code, message: message ?? RESULTS[result].message });
}
