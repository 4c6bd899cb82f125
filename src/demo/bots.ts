/**
 * @module bots — the demo market's traders. A maker keeps a ladder of limit orders on both sides
 * of one market around the moving reference price (reading its open orders, cancelling the
 * levels the price left behind, placing the missing ones in batches); a taker sends IOC orders
 * that cross the spread on a random market now and then, so trades, candles and pushes flow.
 * Both are ordinary API users: every order is a signed HTTP request. Prices and sizes are client
 * arithmetic (floats, rounded to the market's scales as text), as any bot's would be.
 */
import { codeOf, type DemoClient } from './demo-client.ts';
import type { PricePath } from './price-path.ts';

/** A market as the bots size orders for it. */
export interface BotMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  readonly amountScale: number;
  /** The smallest order amount, in the base coin. */
  readonly minAmount: number;
  /** The smallest order value (price × amount), in the quote coin. */
  readonly minSize: number;
}

/** What bots share: the reference prices, the markets, a random source, the faucet's coins. */
export interface BotContext {
  readonly path: PricePath;
  readonly random: () => number;
  /** Coins the faucet gives: a bot short of one asks the faucet for this much (decimal text). */
  readonly topUp: ReadonlyMap<string, string>;
  readonly log: (message: string) => void;
}

/** Levels per side of a maker's ladder. */
const LADDER_LEVELS = 8;
/** Least distance of the best quotes from the reference price (a fraction of it). */
const HALF_SPREAD = 0.0005;
/**
 * Distance between levels (a fraction of the starting price). Levels sit on a fixed grid of this
 * step, so a small move of the price keeps them where they are: only the levels the price crossed
 * are cancelled and placed again.
 */
const LEVEL_GAP = 0.0008;
/** Dollar value of a maker's first level; deeper levels are larger. */
const LEVEL_VALUE_USD = 400;
/** At most this many cancels per maker tick: a jump of the price is followed over a few ticks. */
const MAX_CANCELS_PER_TICK = 8;
/** How far past the reference a taker's IOC may trade (a fraction of the price). */
const TAKER_REACH = 0.003;
/** A taker's order is worth 50 to 1,550 dollars. */
const TAKER_MIN_USD = 50;
const TAKER_SPREAD_USD = 1_500;
/** The interface's order type codes: odd is a buy. */
const BUY = 1;
const SELL = 0;

const INSUFFICIENT_BALANCE = 2009;

/** `value` rounded to `scale` decimals as text, down or up. */
function decimal(value: number, scale: number, up: boolean): string {
  const factor = 10 ** scale;
  const scaled = value * factor;
  // The epsilon keeps 0.1 + 0.2-style float noise from moving a value that is already on the grid.
  const units = up ? Math.ceil(scaled - 1e-7) : Math.floor(scaled + 1e-7);
  return (units / factor).toFixed(scale);
}

/** An amount of about `usd` dollars of the market's base coin, at least the market's minimums at `price`. */
function amountFor(market: BotMarket, ctx: BotContext, usd: number, price: number): string {
  const baseUsd = ctx.path.usd(market.base) ?? 1;
  const wanted = Math.max(usd / baseUsd, market.minAmount, (market.minSize * 1.01) / price);
  return decimal(wanted, market.amountScale, true);
}

/** Asks the faucet for the coin the refusal was about; a refused top-up (the hour's allowance used) is only logged once. */
async function topUp(client: DemoClient, ctx: BotContext, coin: string, who: string): Promise<void> {
  const amount = ctx.topUp.get(coin);
  if (amount === undefined) return;
  const r = await client.call('faucet', [
    ['currency', coin],
    ['amount', amount],
  ]);
  if (codeOf(r) !== 1000)
    ctx.log(`demo: ${who} is short of ${coin} and the faucet said: ${JSON.stringify(r)}`);
}

/** A resting order as the maker reads it from getUnfinishedOrdersIgnoreTradeType. */
interface Resting {
  readonly id: string;
  readonly side: number;
  readonly ticks: number;
}

export class Maker {
  readonly name: string;
  readonly #client: DemoClient;
  readonly #market: BotMarket;
  readonly #ctx: BotContext;
  /** The ladder's grid: step and offset in ticks (a random offset, so prices are not all round). */
  readonly #step: number;
  readonly #phase: number;

  constructor(name: string, client: DemoClient, market: BotMarket, ctx: BotContext) {
    this.name = name;
    this.#client = client;
    this.#market = market;
    this.#ctx = ctx;
    const ref = ctx.path.price(market.base, market.quote) ?? 0;
    this.#step = Math.max(1, Math.round(ref * LEVEL_GAP * 10 ** market.priceScale));
    this.#phase = Math.floor(ctx.random() * this.#step);
  }

  /** One round: read the resting orders, cancel the stale ones, place the missing levels. */
  async tick(): Promise<void> {
    const m = this.#market;
    const ref = this.#ctx.path.price(m.base, m.quote);
    if (ref === undefined) return;
    const reply = await this.#client.call('getUnfinishedOrdersIgnoreTradeType', [
      ['currency', m.name],
      ['pageIndex', '1'],
      ['pageSize', '100'],
    ]);
    if (!Array.isArray(reply)) return;
    const resting = reply.map((r) => restingOf(r, m.priceScale)).filter((o): o is Resting => o !== undefined);
    const wanted = [this.#ladder(ref, BUY), this.#ladder(ref, SELL)];
    const stale = resting.filter((o) => !(wanted[o.side === BUY ? 0 : 1] as Ladder).has(o.ticks));
    for (const o of stale.slice(0, MAX_CANCELS_PER_TICK)) {
      await this.#client.call('cancelOrder', [
        ['currency', m.name],
        ['id', o.id],
      ]);
    }
    for (const [i, side] of [BUY, SELL].entries()) {
      const have = new Set(resting.filter((o) => o.side === side).map((o) => o.ticks));
      const missing = [...(wanted[i] as Ladder).entries()].filter(([ticks]) => !have.has(ticks));
      if (missing.length === 0) continue;
      const r = await this.#client.call('orderMoreV2', [
        ['market', m.name],
        ['tradeParams', JSON.stringify(missing.map(([, level]) => level))],
        ['tradeType', String(side)],
      ]);
      if (codeOf(r) === INSUFFICIENT_BALANCE)
        await topUp(this.#client, this.#ctx, side === BUY ? m.quote : m.base, this.name);
    }
  }

  /** The side's target levels by price in ticks: the grid points beyond the half spread. */
  #ladder(ref: number, side: number): Ladder {
    const m = this.#market;
    const scale = 10 ** m.priceScale;
    const step = this.#step;
    const levels: Ladder = new Map();
    const edge = (side === BUY ? ref * (1 - HALF_SPREAD) : ref * (1 + HALF_SPREAD)) * scale;
    const phase = this.#phase;
    const first =
      side === BUY
        ? Math.floor((edge - phase) / step) * step + phase
        : Math.ceil((edge - phase) / step) * step + phase;
    for (let k = 0; k < LADDER_LEVELS; k++) {
      const ticks = side === BUY ? first - k * step : first + k * step;
      if (ticks <= 0) break;
      const price = (ticks / scale).toFixed(m.priceScale);
      const usd = LEVEL_VALUE_USD * (1 + k / 2) * (0.6 + 0.8 * this.#ctx.random());
      levels.set(ticks, [price, amountFor(m, this.#ctx, usd, Number(price))]);
    }
    return levels;
  }
}

/** A side's levels: price in ticks → [price, amount] as the batch sends them. */
type Ladder = Map<number, [string, string]>;

const toTicks = (price: number | string, scale: number): number => Math.round(Number(price) * 10 ** scale);

/** A record of the order list: its id, side and price in ticks. */
function restingOf(record: unknown, priceScale: number): Resting | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const r = record as Record<string, unknown>;
  const type = Number(r['type']);
  if (typeof r['id'] !== 'string' || !Number.isInteger(type)) return undefined;
  return { id: r['id'], side: type % 2 === 1 ? BUY : SELL, ticks: toTicks(String(r['price']), priceScale) };
}

export class Taker {
  readonly name: string;
  readonly #client: DemoClient;
  readonly #markets: readonly BotMarket[];
  readonly #ctx: BotContext;

  constructor(name: string, client: DemoClient, markets: readonly BotMarket[], ctx: BotContext) {
    this.name = name;
    this.#client = client;
    this.#markets = markets;
    this.#ctx = ctx;
  }

  /** One IOC order on a random market and side, crossing the spread up to TAKER_REACH past the reference. */
  async tick(): Promise<void> {
    const { random } = this.#ctx;
    const m = this.#markets[Math.floor(random() * this.#markets.length)];
    if (m === undefined) return;
    const ref = this.#ctx.path.price(m.base, m.quote);
    if (ref === undefined) return;
    const side = random() < 0.5 ? BUY : SELL;
    const price = decimal(
      side === BUY ? ref * (1 + TAKER_REACH) : ref * (1 - TAKER_REACH),
      m.priceScale,
      side === BUY,
    );
    const amount = amountFor(m, this.#ctx, TAKER_MIN_USD + random() * TAKER_SPREAD_USD, Number(price));
    const r = await this.#client.call('order', [
      ['currency', m.name],
      ['tradeType', String(side)],
      ['price', price],
      ['amount', amount],
      ['orderType', '2'],
    ]);
    if (codeOf(r) === INSUFFICIENT_BALANCE)
      await topUp(this.#client, this.#ctx, side === BUY ? m.quote : m.base, this.name);
  }
}
