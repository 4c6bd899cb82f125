/**
 * @module refusal — the one way the edge refuses a request: a `Refusal` carrying the interface's
 * result and a clear message, thrown by the parameter readers and handlers of every transport
 * (HTTP public and signed, admin, WebSocket), and the one function that builds the `{code,
 * message}` error body from a result (hono's `HTTPException`, fastify's `lib/errors.js`).
 */
import { RESULTS, type ResultName } from '../../domain/result-codes.ts';

/**
 * A refused request. Readers and handlers throw it; each transport catches it once, where it
 * serves the request, and answers `errorBody(refusal.result, refusal.message)` in its framing. It
 * never escapes an endpoint. (At the edge this keeps each handler a straight line of reads; the
 * engine itself reports outcomes as result names.)
 */
export class Refusal extends Error {
  readonly result: ResultName;
  constructor(result: ResultName, message?: string) {
    super(message ?? RESULTS[result].message);
    this.result = result;
  }
}

/** Throws the refusal for `result`, with a message naming what was wrong (the registry's by default). */
export function refuse(result: ResultName, message?: string): never {
  throw new Refusal(result, message);
}

/** The interface's error body `{code, message}`: the result's wire code and `message` (the registry's text by default). */
export interface ErrorBody {
  readonly code: number;
  readonly message: string;
}

/**
 * The error body of a result, for every transport: HTTP and admin send it as the JSON reply (with
 * HTTP 200, as the real API answered errors, zb-api-facts §2); the WebSocket puts its two fields
 * into the §10.7 error frame. `message` replaces the registry's default text; give one that names
 * the parameter or limit at fault.
 */
export function errorBody(result: ResultName, message?: string): ErrorBody {
  return { code: RESULTS[result].code, message: message ?? RESULTS[result].message };
}

/**
 * The interface's success body `{code: 1000, message: 'success', …data}`, the answer of most calls
 * (the trade API's `{code, message: {des, isSuc, datas}}` is the signed wire's own, signed/wire.ts).
 */
export function successBody<T extends object>(data?: T): { code: 1000; message: 'success' } & T {
  return { code: 1000, message: 'success', ...data } as { code: 1000; message: 'success' } & T;
}

/** The JSON text of `errorBody`. */
export function errorText(result: ResultName, message?: string): string {
  return JSON.stringify(errorBody(result, message));
}

/** Longest piece of a client's text quoted in a message. */
const QUOTE_LIMIT = 40;

/**
 * A client's value quoted for a message, cut short so a huge value cannot bloat the reply: text as
 * is, anything else (a WebSocket field) as its JSON. `'btc_usdt'`, `'aaaa…'`.
 */
export function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return `'${text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text}'`;
}
