/**
 * @module account-report — the bot author's report (issue 35, docs/sandbox.md): for one user's spot
 * account on one market, over a period, its fills, fees, realised and unrealised profit and loss
 * in the quote coin, turnover, the largest drawdown, and the account's value over time.
 *
 * Pure: computed from the user's bills (every balance change, src/store/history-store.ts) and the
 * market's trades (the mark: the last trade price at each moment). The rules:
 * - **A fill** is a `buy` or `sell` bill pair of one order in one command (base and quote), with its
 *   `buyFee`/`sellFee` bill; its price is value ÷ amount. Turnover is Σ value.
 * - **Fees** in the quote coin: a sell's fee is quote already; a buy's fee (base) is valued at its
 *   fill's price. A fee paid in another coin (the platform coin) is listed by coin, outside P&L.
 * - **Cost basis** (average cost): the position held at the start is valued at the start's mark;
 *   a buy adds its value, a sell removes its share of the cost (cost × sold ÷ position, rounded
 *   down). Realised P&L = Σ over sells (value − fee − cost removed); unrealised = the position at
 *   the end's mark − its cost. Base coins that come or go otherwise (a deposit, the faucet, a
 *   withdrawal) enter at the mark of the moment and leave realised at it.
 * - **The account's value** = quote balance + base balance × mark, taken at the start, after
 *   every command's bills and every trade of the period, and at the end. realised + unrealised =
 *   end value − start value − net deposits (`netFlows`), exactly (the same roundings on both sides).
 * - **Order in time**: trades and bills are merged in engine order, not only by time (at a fast
 *   clock many commands share a millisecond): a fill's bills come right after its own trade (the
 *   next trade of its order), and any other bill after the trades of earlier milliseconds only.
 * - **Largest drawdown**: the largest fall of the value less the deposits and withdrawals made
 *   since the start (money moved in or out is no profit and no drawdown) from a peak to a later
 *   low, with both times; its percent is of the account's value at the peak.
 */
import type { BillRow } from '../store/history-store.ts';
import type { MarketSpec } from '../domain/specs.ts';

/** What the report is computed from. */
export interface ReportInput {
  readonly market: MarketSpec;
  readonly baseDecimals: number;
  readonly quoteDecimals: number;
  /** The decimals of a coin a fee was paid in (the platform coin). */
  readonly decimalsOf: (coin: string) => number;
  /** The period, ms, inclusive. */
  readonly from: number;
  readonly to: number;
  /** The user's spot bills up to `to`, any order (earlier ones give the balances at the start). */
  readonly bills: readonly BillRow[];
  /** The market's trades up to `to`, in id (engine) order: time, price (ticks) and the two orders. */
  readonly trades: readonly ReportTrade[];
}

/** A trade of the market as the report reads it. */
export interface ReportTrade {
  readonly time: number;
  readonly price: number;
  readonly takerOrderId: number;
  readonly makerOrderId: number;
}

/** One point of the account's value over time. */
export interface ValuePoint {
  readonly time: number;
  /** The account's value in the quote coin (decimal text). */
  readonly value: string;
  /** The mark then (decimal text, the market's price). */
  readonly price: string;
}

export interface AccountReport {
  readonly market: string;
  readonly base: string;
  readonly quote: string;
  readonly from: number;
  readonly to: number;
  readonly fills: number;
  readonly buys: number;
  readonly sells: number;
  readonly turnover: string;
  readonly fees: { readonly quote: string; readonly other: Record<string, string> };
  readonly realisedPnl: string;
  readonly unrealisedPnl: string;
  readonly position: string;
  readonly startPrice: string;
  readonly endPrice: string;
  readonly startValue: string;
  readonly endValue: string;
  /** Deposits less withdrawals of the two coins over the period, valued when they came. */
  readonly netFlows: string;
  readonly maxDrawdown: {
    readonly amount: string;
    readonly percent: string;
    readonly from: number;
    readonly to: number;
  };
  /** The account's value over time: at most MAX_POINTS points (evenly thinned, first and last kept). */
  readonly series: readonly ValuePoint[];
}

/** The most points of the value series a report carries. */
export const MAX_POINTS = 500;

const SEQ_SHIFT = 2 ** 20;
const ten = (n: number): bigint => 10n ** BigInt(n);

/** Decimal text of `units` at `scale` decimals, trailing zeros trimmed. */
export function unitsText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale === 0 ? '' : digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** Computes the report (the module comment). */
export function accountReport(input: ReportInput): AccountReport {
  const { market, from, to } = input;
  const shift = input.quoteDecimals - input.baseDecimals - market.priceScale;
  /** The quote units `base` base units are worth at `price` ticks, rounded down. */
  const worth = (base: bigint, price: bigint): bigint => {
    const product = base * price;
    if (shift >= 0) return product * ten(shift);
    const d = ten(-shift);
    return product >= 0n ? product / d : -((-product + d - 1n) / d);
  };
  const bills = [...input.bills]
    .filter(
      (b) => b.time <= to && (b.coin === market.base || b.coin === market.quote || /Fee$/.test(b.billType)),
    )
    .sort((a, b) => a.id - b.id);
  let base = 0n;
  let quote = 0n;
  let mark = 0n;
  let t = 0;
  const trades = input.trades.filter((x) => x.time <= to);
  while (t < trades.length && (trades[t] as { time: number }).time < from)
    mark = BigInt((trades[t++] as { price: number }).price);
  let i = 0;
  for (; i < bills.length && (bills[i] as BillRow).time < from; i++) {
    const b = bills[i] as BillRow;
    if (b.coin === market.base) base = BigInt(b.balance);
    else if (b.coin === market.quote) quote = BigInt(b.balance);
  }
  const startPrice = mark;
  let cost = worth(base, mark);
  let realised = 0n;
  let flows = 0n;
  let turnover = 0n;
  let feesQuote = 0n;
  const other = new Map<string, bigint>();
  let [buys, sells] = [0, 0];
  const value = (): bigint => quote + worth(base, mark);
  const startValue = value();
  const points: { time: number; value: bigint; price: bigint }[] = [
    { time: from, value: startValue, price: mark },
  ];
  let peak = { time: from, net: startValue, value: startValue };
  let drawdown = { amount: 0n, peak: startValue, from, to: from };
  const sample = (time: number): void => {
    const v = value();
    const net = v - flows;
    points.push({ time, value: v, price: mark });
    if (net > peak.net) peak = { time, net, value: v };
    if (peak.net - net > drawdown.amount)
      drawdown = { amount: peak.net - net, peak: peak.value, from: peak.time, to: time };
  };
  /** The fill being read: its order, command, side and the amounts seen so far. */
  let fill: { key: string; side: 'buy' | 'sell'; amount?: bigint; value?: bigint } | undefined;
  /** Plays the trades before `time` (and at it when `atToo`) on the mark. */
  const tradesUntil = (time: number, atToo: boolean): void => {
    for (
      let x = trades[t];
      x !== undefined && (x.time < time || (atToo && x.time === time));
      x = trades[++t]
    ) {
      mark = BigInt(x.price);
      sample(x.time);
    }
  };
  /** Plays the trades up to and including the next one of `orderId` at or before `time`; false: none. */
  const tradesUntilOrder = (orderId: number, time: number): boolean => {
    let j = t;
    for (let x = trades[j]; x !== undefined && x.time <= time; x = trades[++j])
      if (x.takerOrderId === orderId || x.makerOrderId === orderId) {
        for (; t <= j; t++) {
          mark = BigInt((trades[t] as ReportTrade).price);
          sample((trades[t] as ReportTrade).time);
        }
        return true;
      }
    return false;
  };
  for (; i < bills.length; i++) {
    const b = bills[i] as BillRow;
    const change = BigInt(b.change);
    const key = `${Math.floor(b.id / SEQ_SHIFT)}:${b.ref}`;
    const isBase = b.coin === market.base;
    // Any other bill: after the trades of earlier milliseconds (its own, if any, are a fill's).
    if (b.billType !== 'buy' && b.billType !== 'sell') tradesUntil(b.time, false);
    if (b.billType === 'buy' || b.billType === 'sell') {
      if (
        fill === undefined ||
        fill.key !== key ||
        fill.side !== b.billType ||
        (isBase ? fill.amount : fill.value) !== undefined
      ) {
        fill = { key, side: b.billType };
        // A new fill: its own trade is the next of its order (a fill without one: by time).
        if (!tradesUntilOrder(Number(b.ref), b.time)) tradesUntil(b.time, true);
      }
      if (isBase) {
        fill.amount = change < 0n ? -change : change;
        // A sell takes its share of the cost before the position falls.
        if (b.billType === 'sell' && base > 0n) {
          const removed = (cost * fill.amount) / base;
          cost -= removed;
          realised -= removed;
        }
      } else fill.value = change < 0n ? -change : change;
      if (fill.amount !== undefined && fill.value !== undefined) {
        turnover += fill.value;
        if (fill.side === 'buy') {
          buys++;
          cost += fill.value;
        } else {
          sells++;
          realised += fill.value;
        }
      }
    } else if (b.billType === 'buyFee' || b.billType === 'sellFee') {
      const fee = change < 0n ? -change : change;
      if (b.coin === market.quote) {
        feesQuote += fee;
        realised -= fee;
      } else if (isBase) {
        // Valued at its fill's price; the position is smaller by it, its cost unchanged.
        const f = fill?.key === key ? fill : undefined;
        feesQuote +=
          f?.amount !== undefined && f.amount > 0n && f.value !== undefined
            ? (fee * f.value) / f.amount
            : worth(fee, mark);
      } else other.set(b.coin, (other.get(b.coin) ?? 0n) + fee);
    } else if (isBase) {
      const moved = worth(change, mark);
      flows += moved;
      if (change > 0n) cost += moved;
      else if (base > 0n) {
        const removed = (cost * -change) / base;
        cost -= removed;
        realised += -moved - removed;
      }
    } else if (b.coin === market.quote) flows += change;
    if (isBase) base = BigInt(b.balance);
    else if (b.coin === market.quote) quote = BigInt(b.balance);
    // One value per command: between a fill's bills the account is half-way (the base gone, the quote not yet come).
    const next = bills[i + 1];
    if (next === undefined || Math.floor(next.id / SEQ_SHIFT) !== Math.floor(b.id / SEQ_SHIFT))
      sample(b.time);
  }
  tradesUntil(to, true);
  sample(to);
  const endValue = value();
  const q = (units: bigint): string => unitsText(units, input.quoteDecimals);
  const p = (ticks: bigint): string => unitsText(ticks, market.priceScale);
  const percent = drawdown.peak > 0n ? unitsText((drawdown.amount * 10_000n) / drawdown.peak, 2) : '0';
  return {
    market: market.name,
    base: market.base,
    quote: market.quote,
    from,
    to,
    fills: buys + sells,
    buys,
    sells,
    turnover: q(turnover),
    fees: {
      quote: q(feesQuote),
      other: Object.fromEntries(
        [...other].map(([coin, units]) => [coin, unitsText(units, input.decimalsOf(coin))]),
      ),
    },
    realisedPnl: q(realised),
    unrealisedPnl: q(worth(base, mark) - cost),
    position: unitsText(base, input.baseDecimals),
    startPrice: p(startPrice),
    endPrice: p(mark),
    startValue: q(startValue),
    endValue: q(endValue),
    netFlows: q(flows),
    maxDrawdown: { amount: q(drawdown.amount), percent, from: drawdown.from, to: drawdown.to },
    series: thin(points).map((x) => ({ time: x.time, value: q(x.value), price: p(x.price) })),
  };
}

/** At most MAX_POINTS of `points`, evenly spaced, the first and the last kept. */
function thin<T>(points: readonly T[]): T[] {
  if (points.length <= MAX_POINTS) return [...points];
  const out: T[] = [];
  for (let k = 0; k < MAX_POINTS; k++)
    out.push(points[Math.round((k * (points.length - 1)) / (MAX_POINTS - 1))] as T);
  return out;
}
