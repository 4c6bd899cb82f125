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
 * Forced liquidation is not modelled: an account at or below the liquidation line (1.08) makes
 * `afterCommand` throw, so that a stream reaching one fails here, plainly, rather than as a
 * divergence of books or balances. Cross accounts have no risk side here (nor in the engine).
 */
import type { Pocket } from './naive-margin.ts';

const BP = 10_000n;
const NOTICE_BP = 11_300n;
const CLEAR_BP = 11_500n;
const LIQUIDATION_BP = 10_800n;
const WINDOW_MS = 300_000;
const MAX_TRADES = 64;
const BAND_BP = 200n;

/** What the risk side reads of the reference engine. */
export interface NaiveRiskHost {
  /** Every market in configuration order, with its last price and best bid and ask now (ticks). */
  markets(): readonly {
    readonly name: string;
    readonly base: string;
    readonly quote: string;
    readonly priceScale: number;
    readonly lastPrice: bigint;
    readonly bestBid: bigint | undefined;
    readonly bestAsk: bigint | undefined;
  }[];
  decimals(coin: string): number;
  /** Every margin account name (`i:<user>:<market>` for isolated ones). */
  accounts(): readonly string[];
  pocketOf(account: string, coin: string): Pocket;
}

interface Window {
  /** [time, price] of the trades since the market became active, newest last (pruned lazily). */
  trades: [number, bigint][];
  last: bigint | undefined;
  mark: bigint | undefined;
}

export class NaiveRisk {
  readonly #host: NaiveRiskHost;
  /** Active markets by name. */
  readonly #windows = new Map<string, Window>();
  readonly #flagged = new Set<string>();

  constructor(host: NaiveRiskHost) {
    this.#host = host;
  }

  /** After an accepted command at `time` whose trades were `trades` (in execution order). */
  afterCommand(time: number, trades: readonly { market: string; price: number }[]): void {
    const accounts = this.#host.accounts().filter((a) => a.startsWith('i:'));
    for (const m of this.#host.markets()) {
      const mine = accounts.filter((a) => a.slice(a.indexOf(':', 2) + 1) === m.name);
      const owing = mine.some((a) => this.#owes(a, m.base, m.quote));
      let w = this.#windows.get(m.name);
      if (w !== undefined) {
        for (const t of trades)
          if (t.market === m.name) {
            w.trades.push([time, BigInt(t.price)]);
            w.last = BigInt(t.price);
          }
        if (!owing) {
          this.#windows.delete(m.name);
          w = undefined;
        }
      } else if (owing) {
        const seeded = m.lastPrice > 0n;
        w = {
          trades: seeded ? [[time, m.lastPrice]] : [],
          last: seeded ? m.lastPrice : undefined,
          mark: undefined,
        };
        this.#windows.set(m.name, w);
      }
      if (w !== undefined) w.mark = markOf(w, time, m.bestBid, m.bestAsk);
      for (const a of mine) this.#flag(a, m, w?.mark);
    }
  }

  #owes(account: string, base: string, quote: string): boolean {
    const b = this.#host.pocketOf(account, base);
    const q = this.#host.pocketOf(account, quote);
    return b.borrowed + b.interest + q.borrowed + q.interest > 0n;
  }

  #flag(
    account: string,
    m: { name: string; base: string; quote: string; priceScale: number },
    mark: bigint | undefined,
  ): void {
    const v = mark === undefined ? undefined : this.#valuation(account, m, mark);
    if (v === undefined || v.debt.n === 0n) {
      if (!this.#owes(account, m.base, m.quote)) this.#flagged.delete(account);
      return;
    }
    // assets ÷ debt ≤ line ÷ BP, cross-multiplied (both denominators positive).
    const atOrBelow = (lineBp: bigint): boolean =>
      v.assets.n * v.debt.d * BP <= lineBp * v.debt.n * v.assets.d;
    if (atOrBelow(LIQUIDATION_BP))
      throw new Error(
        `reference: ${account} is at or below the liquidation line at mark ${mark}; the reference does not model liquidation`,
      );
    if (!this.#flagged.has(account) && atOrBelow(NOTICE_BP)) this.#flagged.add(account);
    else if (this.#flagged.has(account) && !atOrBelow(CLEAR_BP)) this.#flagged.delete(account);
  }

  /** Assets and debt of an isolated account in quote units at `mark` (ticks), as fractions. */
  #valuation(
    account: string,
    m: { base: string; quote: string; priceScale: number },
    mark: bigint,
  ): { assets: { n: bigint; d: bigint }; debt: { n: bigint; d: bigint } } {
    const shift = this.#host.decimals(m.quote) - m.priceScale - this.#host.decimals(m.base);
    const price =
      shift >= 0 ? { n: mark * 10n ** BigInt(shift), d: 1n } : { n: mark, d: 10n ** BigInt(-shift) };
    const b = this.#host.pocketOf(account, m.base);
    const q = this.#host.pocketOf(account, m.quote);
    return {
      assets: { n: (q.available + q.frozen) * price.d + (b.available + b.frozen) * price.n, d: price.d },
      debt: { n: (q.borrowed + q.interest) * price.d + (b.borrowed + b.interest) * price.n, d: price.d },
    };
  }

  // ───────────── reads ─────────────

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
    const name = account.slice(account.indexOf(':', 2) + 1);
    const m = this.#host.markets().find((x) => x.name === name);
    const mark = this.#windows.get(name)?.mark;
    if (m === undefined || mark === undefined) return undefined;
    const v = this.#valuation(account, m, mark);
    if (v.debt.n === 0n) return undefined;
    return Number((v.assets.n * v.debt.d * BP) / (v.debt.n * v.assets.d));
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
