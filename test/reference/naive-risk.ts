/**
 * @module naive-risk — the reference engine's risk side for isolated accounts (issue 15), written
 * the slow obvious way from docs/margin.md ("Mark price", "Lines and the notice flag", "Risk in the
 * engine"), sharing no code with src/margin or src/engine: after every accepted command it looks
 * at every market and every isolated account; prices, valuations and risk rates are exact bigints
 * and fractions.
 *
 * - **Active markets**: a market has a mark only while an isolated account owes something there.
 *   The first such account starts the mark afresh from the market's last trade (one trade at that
 *   price, at this command's time) and the book; when nothing is owed there any more the mark is
 *   dropped. Trades count towards the mark only from the command after the market became active.
 * - **Mark** = median(L, A, M): L the last trade, A the floor of the average of the newest 64
 *   trades of the last 5 minutes (L when none), M the book's mid ⌊(bid + ask) ÷ 2⌋ clamped to
 *   A ± 2 % (low edge rounded up, high edge down; A with a one-sided book).
 * - **Notice flag**: set at a risk rate ≤ 1.13 at the mark, cleared only above 1.15.
 *
 * - **Liquidation** at a risk rate ≤ 1.08: the account waits in a queue (lowest risk rate first,
 *   ties by account); each command handles at most 32 liquidations, running ones first (oldest
 *   first) then queued ones. Begin: unflag, cancel the account's orders, loans charged and put in
 *   status 3. Each turn: one IOC order inside the 3 % band (only when the book has something
 *   inside it), without trading fee; then repay what it holds of each coin it owes; when nothing
 *   more could trade: insurance cover, bad debt, the 1 % fee, loans closed as 4, unlocked. Between
 *   turns the marks, flags and queue are taken again: the cascade. A running liquidation goes on
 *   at a mark move, at FireTimers, or when the book holds something inside its band (issue 29).
 *   A locked account's owner may not trade, transfer, borrow or repay on it.
 * - Under `markRule: 'depth'` (issue 29, the default venue's) the mark is instead the window of
 *   the newest D of value (`depthTake`): no book, no clock; and every market keeps its window,
 *   fed by every trade whether anything is owed there or not (an active market's mark is it, and
 *   so is the mark limits read in an inactive one).
 *
 * Cross accounts have no risk side here (nor in the engine's liquidation yet).
 */
import { ValuationPaths } from '../../src/margin/valuation-path.ts';
import type { Pocket } from './naive-margin.ts';

const BP = 10_000n;
const NOTICE_BP = 11_300n;
const CLEAR_BP = 11_500n;
const LIQUIDATION_BP = 10_800n;
const WINDOW_MS = 300_000;
const MAX_TRADES = 64;
const BAND_BP = 200n;
const LIQUIDATION_BAND_BP = 300n;
const FEE_BP = 100n;
const MAX_PER_STEP = 32;

/** A market as the risk side reads it. */
export interface NaiveRiskMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  /** Base units per lot. */
  readonly lotUnits: bigint;
  readonly lastPrice: bigint;
  readonly bestBid: bigint | undefined;
  readonly bestAsk: bigint | undefined;
  /** Minimum order value in quote units, and quote units per tick·lot (the `depth` rule's window). */
  readonly minSize: bigint;
  readonly tickLotQuote: bigint;
}

/** What the risk side reads of the reference engine, and what it asks of it. */
export interface NaiveRiskHost {
  /** Every market in configuration order, with its last price and best bid and ask now (ticks). */
  markets(): readonly NaiveRiskMarket[];
  decimals(coin: string): number;
  /** Every margin account name (`i:<user>:<market>` for isolated ones). */
  accounts(): readonly string[];
  pocketOf(account: string, coin: string): Pocket;
  /** The current command's trades so far, in execution order. */
  trades(): readonly { market: string; price: number; amount: number }[];
  /** The venue's mark rule (`markRule`; absent: `median`). */
  readonly markRule: 'depth' | 'median';
  /** Cancels the account's resting orders (reason `liquidation`), oldest first. */
  cancelAccountOrders(account: string): void;
  /**
   * An IOC limit order of the account without trading fee, after cancelling the owner's resting
   * orders in the market that it could reach (reason `liquidation`); returns the lots filled.
   */
  liquidationOrder(account: string, side: 'buy' | 'sell', priceTicks: bigint, lots: bigint): bigint;
  /** Auto-repayment of the fills' makers (as after any order). */
  autoRepay(): void;
  readonly margin: {
    beginLiquidation(account: string, coins: readonly string[]): void;
    owedNow(account: string, coin: string): bigint;
    liquidationRepay(account: string, coin: string, amount: bigint): void;
    insurance(coin: string): bigint;
    insuranceCover(account: string, coin: string, amount: bigint): void;
    writeOff(account: string, coin: string, amount: bigint): void;
    liquidationFee(account: string, coin: string, amount: bigint): void;
  };
}

interface Window {
  /** [time, price] of the trades since the market became active, newest last (pruned lazily). */
  trades: [number, bigint][];
  last: bigint | undefined;
  mark: bigint | undefined;
  /** The `depth` rule's window: [price, lots] of its slots, oldest first, and its value D. */
  slots?: [bigint, bigint][];
  depth?: bigint;
}

/** One coin of a liquidation's outcome. */
export interface NaiveCoinOutcome {
  repaid: bigint;
  shortfall: bigint;
  insurance: bigint;
  badDebt: bigint;
  fee: bigint;
}

/** One liquidation. */
export interface NaiveLiquidation {
  readonly id: number;
  readonly account: string;
  readonly market: string;
  readonly markAtStart: bigint;
  readonly riskRateBp: number;
  readonly orders: { side: 'buy' | 'sell'; priceTicks: bigint; amount: bigint; filled: bigint }[];
  readonly coins: Map<string, NaiveCoinOutcome>;
  done: boolean;
}

interface Position {
  held: bigint;
  available: bigint;
  owed: bigint;
}

const marketOf = (account: string): string => account.slice(account.indexOf(':', 2) + 1);

export class NaiveRisk {
  readonly #host: NaiveRiskHost;
  /** Active markets by name. */
  readonly #windows = new Map<string, Window>();
  /**
   * Under `markRule: 'depth'`: every market's window, active or not, fed with every trade (issue 29:
   * a market's mark does not depend on whether anything is owed there); an active market's entry
   * in `#windows` is the same window.
   */
  readonly #depthWindows = new Map<string, Window>();
  readonly #flagged = new Set<string>();
  /** Waiting accounts and their risk rate (BP) when last queued. */
  readonly #queue = new Map<string, number>();
  /** Running liquidations by account, oldest first. */
  readonly #running = new Map<string, NaiveLiquidation>();
  readonly #records: NaiveLiquidation[] = [];
  /** How many of the command's trades the marks have taken. */
  #seen = 0;

  constructor(host: NaiveRiskHost) {
    this.#host = host;
  }

  /** Whether the account is locked by a running liquidation. */
  isLocked(account: string): boolean {
    return this.#running.has(account);
  }

  /** After an accepted command at `time` (`timers`: it was FireTimers). */
  afterCommand(time: number, timers: boolean): void {
    this.#seen = 0;
    let budget = MAX_PER_STEP;
    let moved = this.#refresh(time);
    let go = timers || moved || this.#queue.size > 0 || this.#liquidityInBand();
    while (go && budget > 0 && (this.#running.size > 0 || this.#queue.size > 0)) {
      budget -= this.#round(budget);
      moved = this.#refresh(time);
      go = moved || this.#queue.size > 0;
    }
  }

  /**
   * Marks, active markets, flags and the queue, from scratch over every market and account.
   * Returns whether the mark of a market that was already active changed.
   */
  #refresh(time: number): boolean {
    const trades = this.#host.trades().slice(this.#seen);
    this.#seen += trades.length;
    const accounts = this.#host.accounts().filter((a) => a.startsWith('i:'));
    let moved = false;
    const forCross = this.#crossMarkets();
    for (const m of this.#host.markets()) {
      const mine = accounts.filter((a) => marketOf(a) === m.name);
      const busy =
        forCross.has(m.name) ||
        mine.some((a) => !this.#running.has(a) && this.#owes(a, m)) ||
        [...this.#running.values()].some((r) => r.market === m.name);
      if (this.#host.markRule === 'depth') {
        let d = this.#depthWindows.get(m.name);
        if (d === undefined) {
          d = { trades: [], last: undefined, mark: undefined, slots: [], depth: depthOf(m) };
          this.#depthWindows.set(m.name, d);
        }
        const before = d.mark;
        for (const t of trades) if (t.market === m.name) depthTake(d, BigInt(t.price), BigInt(t.amount));
        if (this.#windows.has(m.name) && d.mark !== undefined && d.mark !== before) moved = true;
        if (busy) this.#windows.set(m.name, d);
        else this.#windows.delete(m.name);
        for (const a of mine) this.#check(a, m, busy ? d.mark : undefined);
        continue;
      }
      let w = this.#windows.get(m.name);
      if (w !== undefined) {
        const before = w.mark;
        if (w.slots !== undefined) {
          for (const t of trades) if (t.market === m.name) depthTake(w, BigInt(t.price), BigInt(t.amount));
        } else {
          for (const t of trades)
            if (t.market === m.name) {
              w.trades.push([time, BigInt(t.price)]);
              w.last = BigInt(t.price);
            }
          w.mark = markOf(w, time, m.bestBid, m.bestAsk);
        }
        if (w.mark !== undefined && w.mark !== before) moved = true;
        if (!busy) {
          this.#windows.delete(m.name);
          w = undefined;
        }
      } else if (busy) {
        const seeded = m.lastPrice > 0n;
        w = {
          trades: seeded ? [[time, m.lastPrice]] : [],
          last: seeded ? m.lastPrice : undefined,
          mark: undefined,
        };
        w.mark = markOf(w, time, m.bestBid, m.bestAsk);
        this.#windows.set(m.name, w);
      }
      for (const a of mine) this.#check(a, m, w?.mark);
    }
    return moved;
  }

  /**
   * The markets cross accounts keep marked: those on the valuation paths (docs/margin.md, the
   * path rule, as `ValuationPaths` chooses it from the list of markets) of every coin a cross
   * account holds or owes while it owes something. The reference does not liquidate cross
   * accounts (the generator keeps them clear of their lines); it keeps the same marks.
   */
  #crossMarkets(): Set<string> {
    const markets = this.#host.markets();
    const coins = [...new Set(markets.flatMap((m) => [m.base, m.quote]))];
    const valuationCoin = coins.includes('usdt') ? 'usdt' : (markets[0]?.quote ?? '');
    const paths = new ValuationPaths(
      markets.map((m) => ({ ...m, baseDecimal: 0, quoteDecimal: 0 })),
      valuationCoin,
    );
    const out = new Set<string>();
    for (const a of this.#host.accounts()) {
      if (!a.startsWith('c:')) continue;
      const pockets = coins.map((c) => [c, this.#host.pocketOf(a, c)] as const);
      if (!pockets.some(([, p]) => p.borrowed + p.interest > 0n)) continue;
      for (const [coin, p] of pockets)
        if (p.available + p.frozen + p.borrowed + p.interest > 0n)
          for (const leg of paths.path(coin) ?? []) out.add(leg.market);
    }
    return out;
  }

  #owes(account: string, m: NaiveRiskMarket): boolean {
    const b = this.#host.pocketOf(account, m.base);
    const q = this.#host.pocketOf(account, m.quote);
    return b.borrowed + b.interest + q.borrowed + q.interest > 0n;
  }

  /** The account's notice flag (with its hysteresis) and, at or below 1.08, its place in the queue. */
  #check(account: string, m: NaiveRiskMarket, mark: bigint | undefined): void {
    if (this.#running.has(account) || !this.#owes(account, m)) {
      this.#flagged.delete(account);
      return;
    }
    if (mark === undefined) return;
    const v = this.#valuation(account, m, mark);
    // assets ÷ debt ≤ line ÷ BP, cross-multiplied (both denominators positive).
    const atOrBelow = (lineBp: bigint): boolean =>
      v.assets.n * v.debt.d * BP <= lineBp * v.debt.n * v.assets.d;
    if (!this.#flagged.has(account) && atOrBelow(NOTICE_BP)) this.#flagged.add(account);
    else if (this.#flagged.has(account) && !atOrBelow(CLEAR_BP)) this.#flagged.delete(account);
    if (atOrBelow(LIQUIDATION_BP)) this.#queue.set(account, this.#rateOf(account, m, mark) as number);
  }

  /** One round of liquidations within `budget`: running ones continue, queued ones begin. */
  #round(budget: number): number {
    const running = [...this.#running.keys()].slice(0, MAX_PER_STEP);
    const cont = running.slice(0, budget);
    const waiting = [...this.#queue.entries()].sort(([ka, ra], [kb, rb]) =>
      ra !== rb ? ra - rb : ka < kb ? -1 : ka > kb ? 1 : 0,
    );
    const taken = waiting.slice(0, MAX_PER_STEP - running.length);
    for (const [k] of taken) this.#queue.delete(k);
    const begin = taken.slice(0, Math.max(0, Math.min(budget, MAX_PER_STEP) - cont.length));
    for (const [k, rr] of taken.slice(begin.length)) this.#queue.set(k, rr);
    for (const a of cont) this.#continue(a);
    for (const [a, rr] of begin) this.#begin(a, rr);
    return cont.length + begin.length;
  }

  #market(account: string): NaiveRiskMarket {
    return this.#host.markets().find((x) => x.name === marketOf(account)) as NaiveRiskMarket;
  }

  #begin(account: string, riskRateBp: number): void {
    const m = this.#market(account);
    const mark = this.#windows.get(m.name)?.mark;
    if (mark === undefined) return;
    this.#flagged.delete(account);
    this.#host.cancelAccountOrders(account);
    const r: NaiveLiquidation = {
      id: this.#records.length + 1,
      account,
      market: m.name,
      markAtStart: mark,
      riskRateBp,
      orders: [],
      coins: new Map(
        [m.base, m.quote].map((c) => [c, { repaid: 0n, shortfall: 0n, insurance: 0n, badDebt: 0n, fee: 0n }]),
      ),
      done: false,
    };
    this.#records.push(r);
    this.#running.set(account, r);
    this.#host.margin.beginLiquidation(account, [m.base, m.quote]);
    this.#continue(account);
  }

  #position(account: string, coin: string): Position {
    const p = this.#host.pocketOf(account, coin);
    return { held: p.available + p.frozen, available: p.available, owed: p.borrowed + p.interest };
  }

  /** The order that closes the position inside the band, or undefined when nothing more can trade. */
  #nextOrder(
    m: NaiveRiskMarket,
    base: Position,
    quote: Position,
    mark: bigint,
  ): { side: 'buy' | 'sell'; priceTicks: bigint; lots: bigint } | undefined {
    const lot = m.lotUnits;
    if (quote.owed > quote.held && base.held > base.owed) {
      const lots = (base.held - base.owed) / lot;
      const priceTicks = (mark * (BP - LIQUIDATION_BAND_BP) + BP - 1n) / BP;
      return lots > 0n && priceTicks > 0n ? { side: 'sell', priceTicks, lots } : undefined;
    }
    if (base.owed > base.held && quote.held > quote.owed) {
      const priceTicks = (mark * (BP + LIQUIDATION_BAND_BP)) / BP;
      const need = (base.owed - base.held + lot - 1n) / lot;
      const unit = this.#unit(m, priceTicks);
      // Lots its spare quote pays for at the limit: spare ÷ (value of one lot).
      const perLot = { n: unit.n * lot, d: unit.d };
      const affordable = perLot.n === 0n ? 0n : ((quote.held - quote.owed) * perLot.d) / perLot.n;
      const lots = need < affordable ? need : affordable;
      return lots > 0n ? { side: 'buy', priceTicks, lots } : undefined;
    }
    return undefined;
  }

  /**
   * Whether a running liquidation's order would trade now: the book holds something inside its
   * band (issue 29: such liquidity is taken in the command that brings it).
   */
  #liquidityInBand(): boolean {
    for (const account of this.#running.keys()) {
      const m = this.#market(account);
      const mark = this.#windows.get(m.name)?.mark;
      if (mark === undefined) continue;
      const order = this.#nextOrder(
        m,
        this.#position(account, m.base),
        this.#position(account, m.quote),
        mark,
      );
      const best = order?.side === 'sell' ? m.bestBid : m.bestAsk;
      if (
        order !== undefined &&
        best !== undefined &&
        (order.side === 'sell' ? best >= order.priceTicks : best <= order.priceTicks)
      )
        return true;
    }
    return false;
  }

  #continue(account: string): void {
    const r = this.#running.get(account) as NaiveLiquidation;
    const m = this.#market(account);
    const mark = this.#windows.get(m.name)?.mark as bigint;
    const order = this.#nextOrder(m, this.#position(account, m.base), this.#position(account, m.quote), mark);
    if (order !== undefined) {
      const best = order.side === 'sell' ? m.bestBid : m.bestAsk;
      if (
        best !== undefined &&
        (order.side === 'sell' ? best >= order.priceTicks : best <= order.priceTicks)
      ) {
        const filled = this.#host.liquidationOrder(account, order.side, order.priceTicks, order.lots);
        r.orders.push({
          side: order.side,
          priceTicks: order.priceTicks,
          amount: order.lots * m.lotUnits,
          filled: filled * m.lotUnits,
        });
      }
    }
    this.#settle(r, m, mark);
    this.#host.autoRepay();
  }

  /** Repays what the account holds; when nothing more can trade: insurance, bad debt, fee, unlock. */
  #settle(r: NaiveLiquidation, m: NaiveRiskMarket, mark: bigint): void {
    const margin = this.#host.margin;
    const account = r.account;
    const fund = new Map([m.base, m.quote].map((c) => [c, margin.insurance(c)]));
    const left = new Map<string, Position>();
    for (const coin of [m.base, m.quote]) {
      const p = this.#host.pocketOf(account, coin);
      const owed = margin.owedNow(account, coin);
      const pay = p.available < owed ? p.available : owed;
      if (pay > 0n) margin.liquidationRepay(account, coin, pay);
      (r.coins.get(coin) as NaiveCoinOutcome).repaid += pay;
      left.set(coin, { held: p.available - pay + p.frozen, available: p.available - pay, owed: owed - pay });
    }
    if (this.#nextOrder(m, left.get(m.base) as Position, left.get(m.quote) as Position, mark) !== undefined)
      return;
    for (const coin of [m.base, m.quote]) {
      const l = left.get(coin) as Position;
      const out = r.coins.get(coin) as NaiveCoinOutcome;
      if (l.owed > 0n) {
        const f = fund.get(coin) as bigint;
        const cover = f <= 0n ? 0n : l.owed < f ? l.owed : f;
        if (cover > 0n) margin.insuranceCover(account, coin, cover);
        const bad = l.owed - cover;
        if (bad > 0n) margin.writeOff(account, coin, bad);
        out.shortfall += l.owed;
        out.insurance += cover;
        out.badDebt += bad;
      }
      const due = (out.repaid * FEE_BP) / BP;
      const fee = due < l.available ? due : l.available;
      if (fee > 0n) {
        margin.liquidationFee(account, coin, fee);
        out.fee += fee;
      }
    }
    r.done = true;
    this.#running.delete(account);
  }

  /** Value of one base unit at `ticks`, in quote units, as a fraction. */
  #unit(m: { base: string; quote: string; priceScale: number }, ticks: bigint): { n: bigint; d: bigint } {
    const shift = this.#host.decimals(m.quote) - m.priceScale - this.#host.decimals(m.base);
    return shift >= 0 ? { n: ticks * 10n ** BigInt(shift), d: 1n } : { n: ticks, d: 10n ** BigInt(-shift) };
  }

  /** Assets and debt of an isolated account in quote units at `mark` (ticks), as fractions. */
  #valuation(
    account: string,
    m: { base: string; quote: string; priceScale: number },
    mark: bigint,
  ): { assets: { n: bigint; d: bigint }; debt: { n: bigint; d: bigint } } {
    const price = this.#unit(m, mark);
    const b = this.#host.pocketOf(account, m.base);
    const q = this.#host.pocketOf(account, m.quote);
    return {
      assets: { n: (q.available + q.frozen) * price.d + (b.available + b.frozen) * price.n, d: price.d },
      debt: { n: (q.borrowed + q.interest) * price.d + (b.borrowed + b.interest) * price.n, d: price.d },
    };
  }

  #rateOf(account: string, m: NaiveRiskMarket, mark: bigint): number | undefined {
    const v = this.#valuation(account, m, mark);
    if (v.debt.n === 0n) return undefined;
    return Number((v.assets.n * v.debt.d * BP) / (v.debt.n * v.assets.d));
  }

  // ───────────── reads ─────────────

  /**
   * The mark every margin limit reads (docs/margin.md, "Limits at the mark"): the market's mark
   * while it is marked; else the mark it would start with now — its last trade as the one trade
   * of a fresh window at `time`, and its book now. Undefined before the market's first trade.
   */
  limitMark(market: string, time: number): bigint | undefined {
    const w = this.#windows.get(market) ?? this.#depthWindows.get(market);
    if (w !== undefined) return w.mark;
    const m = this.#host.markets().find((x) => x.name === market);
    if (m === undefined || m.lastPrice <= 0n) return undefined;
    const fresh: Window = { trades: [[time, m.lastPrice]], last: m.lastPrice, mark: undefined };
    return markOf(fresh, time, m.bestBid, m.bestAsk);
  }

  /** A market's mark in ticks; undefined while nothing is owed there or before its first trade. */
  markPrice(market: string): number | undefined {
    const mark = this.#windows.get(market)?.mark;
    return mark === undefined ? undefined : Number(mark);
  }

  isFlagged(account: string): boolean {
    return this.#flagged.has(account);
  }

  /** Assets ÷ debt at the mark in basis points, rounded down; undefined without debt or mark. */
  riskRateBp(account: string): number | undefined {
    const m = this.#market(account);
    const mark = this.#windows.get(m.name)?.mark;
    return mark === undefined ? undefined : this.#rateOf(account, m, mark);
  }

  /** Every liquidation, oldest first. */
  liquidations(): readonly NaiveLiquidation[] {
    return this.#records;
  }
}

/** The mark of a window at `time` with the book's best bid and ask (see the module comment). */
function markOf(
  w: Window,
  time: number,
  bid: bigint | undefined,
  ask: bigint | undefined,
): bigint | undefined {
  w.trades = w.trades.filter(([t]) => t > time - WINDOW_MS).slice(-MAX_TRADES);
  if (w.last === undefined) return undefined;
  const last = w.last;
  const avg =
    w.trades.length === 0 ? last : w.trades.reduce((s, [, p]) => s + p, 0n) / BigInt(w.trades.length);
  let mid = avg;
  if (bid !== undefined && ask !== undefined) {
    const lo = (avg * (BP - BAND_BP) + BP - 1n) / BP;
    const hi = (avg * (BP + BAND_BP)) / BP;
    const raw = (bid + ask) / 2n;
    mid = raw < lo ? lo : raw > hi ? hi : raw;
  }
  const [, median] = [last, avg, mid].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  return median;
}

/** The `depth` rule's window D of a market in tick·lots: ⌈2,000 × minSize ÷ tickLotQuote⌉, at least 1. */
function depthOf(m: NaiveRiskMarket): bigint {
  if (m.minSize <= 0n || m.tickLotQuote <= 0n) return 1n;
  const d = (2_000n * m.minSize + m.tickLotQuote - 1n) / m.tickLotQuote;
  return d < 1n ? 1n : d > 2n ** 48n ? 2n ** 48n : d;
}

/**
 * One trade into the `depth` rule's window (docs/margin.md "Mark price"), the slow way: the first
 * seeds a full window at its price; later ones count at their price clamped to mark ± 1 %, with at
 * most their lots (a trade below the low edge with ⌊lots × price ÷ edge⌋), at most ⌈D ÷ price⌉; at
 * 256 slots the two oldest merge; the oldest value leaves while the rest holds D; mark = ⌊Σ pq ÷ Σ q⌋.
 */
function depthTake(w: Window, price: bigint, lots: bigint): void {
  const slots = w.slots as [bigint, bigint][];
  const depth = w.depth as bigint;
  const ceil = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;
  w.last = price;
  if (w.mark === undefined) {
    slots.push([price, ceil(depth, price)]);
    w.mark = price;
    return;
  }
  let lo = ceil(w.mark * (BP - 100n), BP);
  if (lo < 1n) lo = 1n;
  const hi = (w.mark * (BP + 100n)) / BP;
  const p = price < lo ? lo : price > hi ? hi : price;
  let q = price >= p ? lots : (lots * price) / p;
  if (q > ceil(depth, p)) q = ceil(depth, p);
  if (q === 0n) return;
  if (slots.length === 256) {
    const [[p1, l1], [p2, l2]] = slots as [[bigint, bigint], [bigint, bigint]];
    slots.splice(0, 2, [(p1 * l1 + p2 * l2) / (l1 + l2), l1 + l2]);
  }
  slots.push([p, q]);
  const value = (): bigint => slots.reduce((sum, [sp, sl]) => sum + sp * sl, 0n);
  while (slots.length > 1) {
    const [p0, l0] = slots[0] as [bigint, bigint];
    const excess = value() - depth;
    if (excess >= p0 * l0) {
      slots.shift();
      continue;
    }
    const k = excess / p0;
    if (k > 0n) slots[0] = [p0, l0 - k];
    break;
  }
  const lotsSum = slots.reduce((sum, [, sl]) => sum + sl, 0n);
  w.mark = value() / lotsSum;
}
