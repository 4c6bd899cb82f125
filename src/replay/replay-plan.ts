/**
 * @module replay-plan — what a replay plays (docs/sandbox.md, "Replay"): loaded files
 * (replay-data.ts) assigned to the venue's markets and turned into one time-ordered list of
 * trades in the markets' own units (price ticks, lots). A market's trade files are its flow; a
 * market with candles only has each candle played as four trades (open, the nearer extreme, the
 * other, close) of a quarter of its volume each. Amounts are rounded to the market's lot and raised
 * to its minimum order. Pure: the same files give the same plan.
 */
import { basename } from 'node:path';
import { BUY, SELL, type ReplaySource, type Side } from '../domain/commands.ts';
import type { Lots, PriceTicks } from '../domain/money.ts';
import type { MarketSpec } from '../domain/specs.ts';
import type { ReplayInput } from './load.ts';
import { compareDecimals, type ReplayCandle } from './replay-data.ts';

/** One trade the replay sends, in the market's units. `side` is the historical taker's. */
export interface PlannedTrade {
  /** History time (ms). */
  readonly time: number;
  readonly market: string;
  readonly side: Side;
  readonly price: PriceTicks;
  readonly amount: Lots;
}

export interface ReplayPlan {
  readonly sources: ReplaySource[];
  /** The history's first time (ms). */
  readonly historyStart: number;
  readonly trades: PlannedTrade[];
  /** Per market: the base volume of the whole plan in lots (for funding the replay's users). */
  readonly volume: ReadonlyMap<string, { lots: bigint; quoteUnits: bigint }>;
}

/** A candle without a close time lasts until the next one, or this long (ms). */
const DEFAULT_CANDLE_MS = 60_000;

/**
 * The market a file is for, from its name: `btc_usdt-…` names it, `BTCUSDT-…` (Binance's) is the
 * market whose base and quote spell it. undefined when no market matches.
 */
export function marketOfFile(file: string, markets: readonly MarketSpec[]): string | undefined {
  const head = (basename(file).split(/[-.]/)[0] ?? '').toLowerCase();
  return markets.find((m) => m.name === head || `${m.base}${m.quote}` === head)?.name;
}

/** Exact decimal text → whole units at `scale` decimals, rounded half up. */
export function decimalToUnits(text: string, scale: number): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  const digits = BigInt(whole + fraction.slice(0, scale).padEnd(scale, '0'));
  return (fraction[scale] ?? '0') >= '5' ? digits + 1n : digits;
}

/**
 * The plan of `inputs` for a venue with `markets` and the quote coins' decimals. Throws an Error
 * naming the file when a file's market is unknown or not trading, or a price rounds to 0.
 */
export function planReplay(
  inputs: readonly ReplayInput[],
  markets: readonly MarketSpec[],
  quoteDecimals: (coin: string) => number,
): ReplayPlan {
  const assigned = inputs.map((input) => {
    const market = input.market ?? marketOfFile(input.file, markets);
    const spec = markets.find((m) => m.name === market);
    if (spec === undefined) {
      throw new Error(
        `${input.file}: which market? ${market === undefined ? 'its name does not tell' : `no market '${market}'`} ` +
          '(name it: --replay btc_usdt=<file>)',
      );
    }
    if (spec.status !== 'trading') throw new Error(`${input.file}: market ${spec.name} is not trading`);
    return { ...input, spec };
  });
  const hasTrades = new Set(
    assigned.filter((a) => a.stream.events.some((e) => e.kind === 'trade')).map((a) => a.spec.name),
  );
  const perSource: PlannedTrade[][] = [];
  for (const a of assigned) {
    const out: PlannedTrade[] = [];
    const convert = (time: number, side: Side, price: string, amount: string): void => {
      out.push(planned(a.spec, quoteDecimals(a.spec.quote), a.file, time, side, price, amount));
    };
    if (hasTrades.has(a.spec.name)) {
      for (const e of a.stream.events)
        if (e.kind === 'trade') convert(e.time, e.side === 'buy' ? BUY : SELL, e.price, e.amount);
    } else {
      const candles = a.stream.events.filter((e): e is ReplayCandle => e.kind === 'candle');
      candles.forEach((c, i) => {
        const next = candles[i + 1];
        const span = c.closeTime !== undefined ? c.closeTime + 1 - c.time : (next?.time ?? 0) - c.time;
        const quarter = Math.max(1, Math.floor((span > 0 ? span : DEFAULT_CANDLE_MS) / 4));
        const up = compareDecimals(c.close, c.open) >= 0;
        const path = up ? [c.open, c.low, c.high, c.close] : [c.open, c.high, c.low, c.close];
        const amount = quarterOf(c.volume);
        let last = path[0] as string;
        path.forEach((price, k) => {
          const side = k === 0 || compareDecimals(price, last) >= 0 ? BUY : SELL;
          last = price;
          convert(c.time + k * quarter, side, price, amount);
        });
      });
    }
    perSource.push(out);
  }
  // One time order; equal times keep the files' order, then each file's own (as mergeReplay).
  const trades = perSource
    .flatMap((list, i) => list.map((t, j) => ({ t, i, j })))
    .sort((a, b) => a.t.time - b.t.time || a.i - b.i || a.j - b.j)
    .map((x) => x.t);
  const volume = new Map<string, { lots: bigint; quoteUnits: bigint }>();
  for (const t of trades) {
    const v = volume.get(t.market) ?? { lots: 0n, quoteUnits: 0n };
    const spec = assigned.find((a) => a.spec.name === t.market)?.spec as MarketSpec;
    const shift = spec.priceScale + spec.amountScale - quoteDecimals(spec.quote);
    const value = BigInt(t.price) * BigInt(t.amount);
    v.lots += BigInt(t.amount);
    v.quoteUnits += shift >= 0 ? value / 10n ** BigInt(shift) : value * 10n ** BigInt(-shift);
    volume.set(t.market, v);
  }
  const sources: ReplaySource[] = assigned.map((a, i) => ({
    file: a.file,
    sha256: a.sha256,
    format: a.stream.format,
    market: a.spec.name,
    trades: (perSource[i] as PlannedTrade[]).length,
  }));
  return { sources, historyStart: trades[0]?.time ?? 0, trades, volume };
}

/** A quarter of a decimal volume, as decimal text (exact enough: it is rounded to lots next). */
function quarterOf(volume: string): string {
  return String(Number(volume) / 4);
}

function planned(
  spec: MarketSpec,
  quoteDecimals: number,
  file: string,
  time: number,
  side: Side,
  priceText: string,
  amountText: string,
): PlannedTrade {
  const price = decimalToUnits(priceText, spec.priceScale);
  if (price <= 0n || price > BigInt(Number.MAX_SAFE_INTEGER))
    throw new Error(`${file}: price ${priceText} is not a price of ${spec.name}`);
  let lots = decimalToUnits(
    /e/i.test(amountText) ? Number(amountText).toFixed(20) : amountText,
    spec.amountScale,
  );
  if (lots < BigInt(spec.minAmount)) lots = BigInt(spec.minAmount);
  // The order's value (price × amount in the quote coin's units) must reach the market's minimum:
  // ticks × lots ≥ minSize × 10^(priceScale + amountScale − quote decimals).
  const shift = spec.priceScale + spec.amountScale - quoteDecimals;
  const need = BigInt(spec.minSize) * 10n ** BigInt(Math.max(0, shift));
  const per = price * 10n ** BigInt(Math.max(0, -shift));
  if (per * lots < need) lots = (need + per - 1n) / per;
  return { time, market: spec.name, side, price: Number(price) as PriceTicks, amount: Number(lots) as Lots };
}
