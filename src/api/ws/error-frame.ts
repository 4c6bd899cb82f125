/** @module error-frame — the WebSocket's error frame (zb-api-facts §10.7), for every message the gateway refuses. */
import { RESULTS, type ResultName } from '../../domain/result-codes.ts';
import { errorBody } from '../edge/refusal.ts';

/**
 * The error frame of §10.7: the edge's error body (the registry's code, its message with detail)
 * with `no`, `success` and `channel`.
 */
export function errorFrame(
  result: ResultName,
  no: string,
  channel: string | undefined,
  detail?: string,
): string {
  const standard = RESULTS[result].message;
  const text =
    detail === undefined ? undefined : detail.startsWith(standard) ? detail : `${standard}: ${detail}`;
  const { code, message } = errorBody(result, text);
  return JSON.stringify(
    channel === undefined
      ? { no, code, success: false, message }
      : { no, code, success: false, channel, message },
  );
}
