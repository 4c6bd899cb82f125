/**
 * @module validate — checks of the public endpoints' parameters (market, integers), each refusal
 * a 3005-coded reply whose message names the parameter.
 */
import { checkCoinName, splitMarketName, type MarketSpec } from '../../../domain/specs.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import { resultReply } from '../reply.ts';
import { param, type ApiReply, type ApiRequest } from '../types.ts';

/** A checked parameter, or the reply refusing it. */
export type Checked<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reply: ApiReply };

const refuse = (reply: ApiReply): { ok: false; reply: ApiReply } => ({ ok: false, reply });

/** Echoed client text is cut short and quoted safely inside a message. */
const shown = (text: string): string => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * The `market` parameter: a market the engine has, named `<base>_<quote>` in lowercase exactly.
 * Missing → INVALID_PARAMETER; a retired coin name in it (bchabc_usdt) → RETIRED_COIN_NAME naming
 * the replacement; anything else unknown → UNKNOWN_MARKET. All are code 3005.
 */
export function checkMarket(engine: VenueState, request: ApiRequest, name = 'market'): Checked<MarketSpec> {
  const text = param(request, name);
  if (text === undefined || text === '') {
    return refuse(
      resultReply('INVALID_PARAMETER', `missing parameter '${name}' (a market such as btc_usdt)`),
    );
  }
  const spec = engine.market(text);
  if (spec !== undefined) return { ok: true, value: spec };
  const parts = splitMarketName(text);
  if (parts !== undefined) {
    for (const coin of [parts.base, parts.quote]) {
      const check = checkCoinName(coin);
      if (!check.ok && check.result === 'RETIRED_COIN_NAME') {
        return refuse(resultReply('RETIRED_COIN_NAME', `parameter '${name}': ${check.message}`));
      }
    }
  }
  return refuse(
    resultReply(
      'UNKNOWN_MARKET',
      `unknown market '${shown(text)}' in parameter '${name}': use a lowercase <base>_<quote> id from /data/v1/markets`,
    ),
  );
}

/** Digits without leading zeros ("0", "17"; not "017", "+1", " 1"), at most 16 of them. */
const DIGITS = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * An optional integer parameter in `min..max`. Absent or empty → `fallback` (which may be
 * undefined); not plain decimal digits (no sign, space or leading zero), or out of range →
 * INVALID_PARAMETER naming it.
 */
export function checkInteger<F extends number | undefined>(
  request: ApiRequest,
  name: string,
  min: number,
  max: number,
  fallback: F,
): Checked<number | F> {
  const text = param(request, name);
  if (text === undefined || text === '') return { ok: true, value: fallback };
  const value = DIGITS.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `${min}..${max}`;
    return refuse(
      resultReply(
        'INVALID_PARAMETER',
        `invalid parameter '${name}': '${shown(text)}' is not an integer ${range}`,
      ),
    );
  }
  return { ok: true, value };
}
