/** @module wire — the signed endpoints' edge vocabulary: error replies from the result registry, and parameter readers that refuse bad input with a message naming the parameter. */
import { CLIENT_ORDER_ID } from '../../../domain/commands.ts';
import { RESULTS, type ResultName } from '../../../domain/result-codes.ts';
import { checkCoinName, splitMarketName, type CoinSpec, type MarketSpec } from '../../../domain/specs.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import { echo } from '../../auth/authenticate.ts';
import { param, type ApiReply, type ApiRequest } from '../types.ts';

/**
 * A refused request. Parameter readers throw it and the signed-route pipeline turns it into the
 * error reply; it never escapes a route. (At the edge this keeps each handler a straight line of
 * reads; the engine itself reports outcomes as result names.)
 */
export class Refusal extends Error {
  readonly result: ResultName;
  constructor(result: ResultName, message: string) {
    super(message);
    this.result = result;
  }
}

/** Throws the refusal for `result` with a message naming what was wrong. */
export function refuse(result: ResultName, message?: string): never {
  throw new Refusal(result, message ?? RESULTS[result].message);
}

/** The interface's error body `{code, message}` (HTTP 200, as the real API answered errors). */
export function errorReply(result: ResultName, message?: string): ApiReply {
  return { json: { code: RESULTS[result].code, message: message ?? RESULTS[result].message } };
}

/** A parameter's value; `undefined` when absent or empty (clients send `name=` for "not given"). */
export function optional(request: ApiRequest, name: string): string | undefined {
  const value = param(request, name);
  return value === undefined || value === '' ? undefined : value;
}

/** A parameter that must be present: INVALID_PARAMETER naming it otherwise. */
export function required(request: ApiRequest, name: string): string {
  const value = optional(request, name);
  if (value === undefined) refuse('INVALID_PARAMETER', `${name} is required`);
  return value;
}

/** A non-negative integer written plainly: digits without leading zeros ("0", "17"; not "017", "+1", " 1"). */
export const PLAIN_INTEGER = /^(?:0|[1-9][0-9]{0,14})$/;

/** An integer parameter in [min, max] written plainly (PLAIN_INTEGER), `fallback` when absent. */
export function intParam(
  request: ApiRequest,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number {
  const text = optional(request, name);
  if (text === undefined) return fallback;
  const value = PLAIN_INTEGER.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A parameter with a fixed set of values ('0', '1', …), `fallback` when absent. */
export function choiceParam<T extends string>(
  request: ApiRequest,
  name: string,
  allowed: readonly T[],
  fallback?: T,
): T {
  const text = optional(request, name);
  if (text === undefined) {
    if (fallback === undefined)
      refuse('INVALID_PARAMETER', `${name} is required (one of ${allowed.join(', ')})`);
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(text)) {
    refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be one of ${allowed.join(', ')}`);
  }
  return text as T;
}

/** Lowercase check shared by coin and market names: the interface uses lowercase names only. */
function lowercase(name: string, text: string): void {
  if (text !== text.toLowerCase()) {
    refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be lowercase (${echo(text.toLowerCase())})`);
  }
}

/**
 * A market parameter (`currency` or `market`): lowercase `<base>_<quote>` of known coins.
 * Refusals: INVALID_PARAMETER (missing, case, shape), RETIRED_COIN_NAME (naming the replacement),
 * UNKNOWN_COIN, UNKNOWN_MARKET.
 */
export function marketParam(engine: VenueState, request: ApiRequest, name: string): MarketSpec {
  const text = required(request, name);
  lowercase(name, text);
  const parts = splitMarketName(text);
  if (parts === undefined)
    refuse('INVALID_PARAMETER', `${name} ${echo(text)} must be <base>_<quote>, e.g. btc_usdt`);
  for (const coin of [parts.base, parts.quote]) {
    const check = checkCoinName(coin);
    if (!check.ok) refuse(check.result, `${name} ${echo(text)}: ${check.message}`);
  }
  const market = engine.market(text);
  if (market === undefined) refuse('UNKNOWN_MARKET', `${name}: unknown market ${echo(text)}`);
  return market;
}

/** A coin parameter: lowercase, not retired, known. `undefined` when absent. */
export function coinParam(engine: VenueState, request: ApiRequest, name: string): CoinSpec | undefined {
  const text = optional(request, name);
  if (text === undefined) return undefined;
  lowercase(name, text);
  const check = checkCoinName(text);
  if (!check.ok) refuse(check.result, `${name}: ${check.message}`);
  const coin = engine.coin(text);
  if (coin === undefined) refuse('UNKNOWN_COIN', `${name}: unknown coin ${echo(text)}`);
  return coin;
}

/**
 * A coin parameter of the funds endpoints, in any letter case (ccxt sends `BTC`): not retired,
 * known. `undefined` when absent and not `required`.
 */
export function fundsCoinParam(
  engine: VenueState,
  request: ApiRequest,
  name: string,
  required: true,
): CoinSpec;
export function fundsCoinParam(
  engine: VenueState,
  request: ApiRequest,
  name: string,
  required: false,
): CoinSpec | undefined;
export function fundsCoinParam(
  engine: VenueState,
  request: ApiRequest,
  name: string,
  required: boolean,
): CoinSpec | undefined {
  const given = optional(request, name);
  if (given === undefined) return required ? refuse('INVALID_PARAMETER', `${name} is required`) : undefined;
  const text = given.toLowerCase();
  const check = checkCoinName(text);
  if (!check.ok) refuse(check.result, `${name}: ${check.message}`);
  return engine.coin(text) ?? refuse('UNKNOWN_COIN', `${name}: unknown coin ${echo(given)}`);
}

/** The address and record endpoints' success body: `{code:1000, message:{des, isSuc, datas}}`. */
export function datasReply(datas: unknown): ApiReply {
  return { json: { code: 1000, message: { des: 'success', isSuc: true, datas } } };
}

/** Which order a cancel or query names: exactly one of `id` (a positive integer) and `customerOrderId`. */
export type OrderRef = { readonly orderId: number } | { readonly clientOrderId: string };

/**
 * An order id as the real venue wrote them: a positive integer of up to 19 digits (ZB's ids were
 * 17 to 19 digits, beyond 2^53), without leading zeros, always handled as text on the way in.
 */
const ORDER_ID = /^[1-9][0-9]{0,18}$/;

/**
 * The order a cancel or query names. Refusals: INVALID_PARAMETER (both or neither given, an id
 * that is not ORDER_ID, a malformed customerOrderId); ORDER_NOT_FOUND for a well-formed id beyond
 * 2^53 − 1, which no order of this venue can have (never rounded to a nearby one).
 */
export function orderRefParam(request: ApiRequest): OrderRef {
  const id = optional(request, 'id');
  const clientOrderId = optional(request, 'customerOrderId');
  if (id !== undefined && clientOrderId !== undefined) {
    refuse('INVALID_PARAMETER', 'id and customerOrderId are mutually exclusive: give one');
  }
  if (id !== undefined) {
    if (!ORDER_ID.test(id)) {
      refuse(
        'INVALID_PARAMETER',
        `id ${echo(id)} must be an order id (a positive integer of up to 19 digits)`,
      );
    }
    const orderId = Number(id);
    if (!Number.isSafeInteger(orderId)) refuse('ORDER_NOT_FOUND');
    return { orderId };
  }
  if (clientOrderId !== undefined) {
    if (!CLIENT_ORDER_ID.test(clientOrderId)) {
      refuse('INVALID_PARAMETER', `customerOrderId ${echo(clientOrderId)} must be 4 to 36 letters or digits`);
    }
    return { clientOrderId };
  }
  return refuse('INVALID_PARAMETER', 'id or customerOrderId is required');
}

/** ORDER_NOT_FOUND (3001), naming the order asked for and its market (`open`: only open orders count). */
export function orderNotFound(market: string, ref: OrderRef, open: boolean): never {
  const which = 'orderId' in ref ? `id ${ref.orderId}` : `customerOrderId ${ref.clientOrderId}`;
  return refuse(
    'ORDER_NOT_FOUND',
    `order not found: this account has no ${open ? 'open ' : ''}order with ${which} in ${market}` +
      (open ? ' (finished, or never placed)' : ''),
  );
}
