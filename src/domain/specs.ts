/**
 * @module specs — coins and markets: their specifications, naming rules and validation.
 */
import type { CoinFunds } from './chains.ts';
import { parseDecimal, pow10, type CoinUnits, type Lots, type RatePpm } from './money.ts';
import type { ResultName } from './result-codes.ts';

/** Old coin names the interface retired on 2021-07-16, with their replacements. */
export const RETIRED_COIN_NAMES: Readonly<Record<string, string>> = Object.freeze({
  bchabc: 'bch',
  bchsv: 'bsv',
  hsr: 'hc',
  nxwc: 'xwc',
});

/** The highest trading fee rate, in ppm (10%). */
export const MAX_FEE_PPM = 100_000;

export const COIN_NAME = /^[a-z][a-z0-9]{0,15}$/;

export interface CoinSpec {
  /** Lowercase name, the coin's key everywhere ("btc"). */
  readonly name: string;
  /** Decimals of the coin's smallest unit (0..15). */
  readonly unitDecimal: number;
  readonly enName: string;
  readonly cnName: string;
  /** The new name if the coin was renamed, else the English name. */
  readonly showName: string;
  /** The interface's fund type id (`fundstype`). */
  readonly fundsType: number;
  readonly canDeposit: boolean;
  readonly canWithdraw: boolean;
}

/** `closed` is final (CloseMarket): no orders, no status change; the market stays listed. */
export type MarketStatus = 'trading' | 'halted' | 'closed';

export interface MarketSpec {
  /** `<base>_<quote>`, lowercase. */
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  readonly amountScale: number;
  /** Minimum order amount, in lots. */
  readonly minAmount: Lots;
  /** Minimum order value (price × amount), in quote coin units. */
  readonly minSize: CoinUnits;
  readonly makerFee: RatePpm;
  readonly takerFee: RatePpm;
  readonly status: MarketStatus;
}

/** Venue-wide engine settings that are part of the replicated state. */
export interface VenueSettings {
  /** The platform coin that fee-opt-in users pay fees with. */
  readonly platformCoin: string;
  /** Share taken off a fee paid in the platform coin, in ppm (250_000 = 25% off). */
  readonly platformFeeDiscount: RatePpm;
  /** The dead-man switch's delay after each cancelAllOrdersAfter call, in milliseconds. */
  readonly cancelAllAfterMs: number;
  /**
   * The margin mark price's rule (docs/margin.md, "Mark price"): `depth`, issue 29's value-weighted
   * window (src/margin/depth-mark.ts), or `median`, issue 15's median of the last trade, the
   * 5-minute average and the clamped mid (src/margin/mark-price.ts). Absent: `median`.
   */
  readonly markRule?: MarkRule;
}

/** The margin mark price's rules (`VenueSettings.markRule`). */
export type MarkRule = 'depth' | 'median';

export interface VenueConfig {
  readonly settings: VenueSettings;
  readonly coins: readonly CoinSpec[];
  readonly markets: readonly MarketSpec[];
  /** Chains, fees and withdrawal limits per coin; a coin without an entry moves only by operator credit. */
  readonly funds?: readonly CoinFunds[];
}

/** The name check every edge applies: lowercase, known shape, and not a retired name. */
export function checkCoinName(
  name: string,
): { ok: true } | { ok: false; result: ResultName; message: string } {
  // Own keys only: `__proto__` or `constructor` is a name to refuse, not Object.prototype's.
  const replacement = Object.hasOwn(RETIRED_COIN_NAMES, name) ? RETIRED_COIN_NAMES[name] : undefined;
  if (replacement !== undefined) {
    return {
      ok: false,
      result: 'RETIRED_COIN_NAME',
      message: `coin name '${name}' is retired; use '${replacement}'`,
    };
  }
  if (!COIN_NAME.test(name))
    return { ok: false, result: 'UNKNOWN_COIN', message: `invalid coin name '${name}'` };
  return { ok: true };
}

/** Splits `<base>_<quote>`; `undefined` if the text is not of that shape. */
export function splitMarketName(name: string): { base: string; quote: string } | undefined {
  const i = name.indexOf('_');
  if (i <= 0 || i !== name.lastIndexOf('_') || i === name.length - 1) return undefined;
  return { base: name.slice(0, i), quote: name.slice(i + 1) };
}

/**
 * Checks a market against its coins. The scale rule makes every trade value exact:
 * amountScale ≤ base.unitDecimal and priceScale + amountScale ≤ quote.unitDecimal.
 * Returns a list of problems (empty when valid).
 */
export function validateMarket(m: MarketSpec, coins: ReadonlyMap<string, CoinSpec>): string[] {
  const problems: string[] = [];
  const base = coins.get(m.base);
  const quote = coins.get(m.quote);
  if (m.name !== `${m.base}_${m.quote}`) problems.push(`market name ${m.name} must be ${m.base}_${m.quote}`);
  if (base === undefined) problems.push(`market ${m.name}: unknown base coin ${m.base}`);
  if (quote === undefined) problems.push(`market ${m.name}: unknown quote coin ${m.quote}`);
  if (m.base === m.quote) problems.push(`market ${m.name}: base and quote are the same coin`);
  for (const [k, v] of [
    ['priceScale', m.priceScale],
    ['amountScale', m.amountScale],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 12)
      problems.push(`market ${m.name}: ${k} must be an integer 0..12`);
  }
  if (base !== undefined && m.amountScale > base.unitDecimal) {
    problems.push(
      `market ${m.name}: amountScale ${m.amountScale} exceeds ${m.base} unitDecimal ${base.unitDecimal}`,
    );
  }
  if (quote !== undefined && m.priceScale + m.amountScale > quote.unitDecimal) {
    problems.push(
      `market ${m.name}: priceScale + amountScale exceeds ${m.quote} unitDecimal ${quote.unitDecimal}`,
    );
  }
  if (!Number.isSafeInteger(m.minAmount) || m.minAmount < 1)
    problems.push(`market ${m.name}: minAmount must be ≥ 1 lot`);
  if (!Number.isSafeInteger(m.minSize) || m.minSize < 0)
    problems.push(`market ${m.name}: minSize must be ≥ 0`);
  if (!Number.isInteger(m.takerFee) || m.takerFee < 0 || m.takerFee > MAX_FEE_PPM)
    problems.push(`market ${m.name}: takerFee must be 0..${MAX_FEE_PPM} ppm`);
  // A negative maker fee is a rebate, paid from fee income; never more than the taker pays.
  if (!Number.isInteger(m.makerFee) || m.makerFee > MAX_FEE_PPM)
    problems.push(`market ${m.name}: makerFee must be an integer ≤ ${MAX_FEE_PPM} ppm`);
  else if (m.makerFee < 0 && (!Number.isInteger(m.takerFee) || -m.makerFee > m.takerFee)) {
    problems.push(
      `market ${m.name}: a maker rebate (${-m.makerFee} ppm) may not exceed the taker fee (${m.takerFee} ppm)`,
    );
  }
  if (m.status !== 'trading' && m.status !== 'halted' && m.status !== 'closed')
    problems.push(`market ${m.name}: unknown status`);
  return problems;
}

export function validateCoin(c: CoinSpec): string[] {
  const problems: string[] = [];
  const name = checkCoinName(c.name);
  if (!name.ok) problems.push(name.message);
  if (!Number.isInteger(c.unitDecimal) || c.unitDecimal < 0 || c.unitDecimal > 15) {
    problems.push(`coin ${c.name}: unitDecimal must be an integer 0..15`);
  }
  return problems;
}

/** Base coin units in one lot of the market. */
export function baseUnitsPerLot(m: MarketSpec, base: CoinSpec): number {
  return pow10(base.unitDecimal - m.amountScale);
}

/** Quote coin units in one tick × one lot. */
export function quoteUnitsPerTickLot(m: MarketSpec, quote: CoinSpec): number {
  return pow10(quote.unitDecimal - m.priceScale - m.amountScale);
}

/** Builds a market spec from human decimal text (for configuration files and tests). */
export function marketFromText(
  spec: {
    base: string;
    quote: string;
    priceScale: number;
    amountScale: number;
    minAmount: string;
    minSize: string;
    makerFee?: string;
    takerFee?: string;
    status?: MarketStatus;
  },
  quoteDecimal: number,
): MarketSpec {
  const minAmount = parseDecimal(spec.minAmount, spec.amountScale);
  const minSize = parseDecimal(spec.minSize, quoteDecimal);
  const makerFee = parseDecimal(spec.makerFee ?? '0.002', 6);
  const takerFee = parseDecimal(spec.takerFee ?? '0.002', 6);
  if (minAmount === undefined || minSize === undefined || makerFee === undefined || takerFee === undefined) {
    throw new Error(`market ${spec.base}_${spec.quote}: a decimal setting has more decimals than its scale`);
  }
  return {
    name: `${spec.base}_${spec.quote}`,
    base: spec.base,
    quote: spec.quote,
    priceScale: spec.priceScale,
    amountScale: spec.amountScale,
    minAmount,
    minSize,
    makerFee,
    takerFee,
    status: spec.status ?? 'trading',
  };
}
