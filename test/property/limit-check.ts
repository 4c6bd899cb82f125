/**
 * @module limit-check — the differential run's check of issue 29 §1 after every command: no
 * accepted borrow or transfer out of a margin account leaves it below its opening line (1.25) at
 * the marks its limits read (docs/margin.md, "Limits at the mark").
 *
 * The marks are the reference's (naive-risk.ts `limitMark`, read before the command: the marks of
 * the previous step, or the start mark of a market not yet marked); the account is the engine's
 * (its public margin view after the command), valued here on its own: an isolated account's base
 * at its market's mark, a cross account's every coin along its valuation path, in exact
 * fractions. A borrow's first hour of interest, charged with it, is not part of the limit
 * (lines.ts): the borrow is checked without the interest the command itself charged. The
 * account's resting orders count as what they could hand their counterparties beyond those marks
 * (src/engine/resting-loss.ts): the line holds after their worst fills too.
 */
import assert from 'node:assert/strict';
import type { SequencedCommand } from '../../src/domain/commands.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { BUY } from '../../src/domain/commands.ts';
import { quoteUnitsPerTickLot } from '../../src/domain/specs.ts';
import { ValuationPaths } from '../../src/margin/valuation-path.ts';
import type { NaiveEngine } from '../reference/naive-engine.ts';

const BP = 10_000n;
const START_LINE_BP = 12_500n;

interface Frac {
  readonly n: bigint;
  readonly d: bigint;
}

/** The margin account a borrow or a transfer out names, or undefined for any other command. */
function target(cmd: SequencedCommand): { userId: number; acctType: 1 | 2; market: string } | undefined {
  if (cmd.type !== 'Borrow' && !(cmd.type === 'MarginTransfer' && cmd.direction === 'out')) return undefined;
  if (cmd.acctType !== 1 && cmd.acctType !== 2) return undefined;
  return { userId: cmd.userId, acctType: cmd.acctType, market: cmd.acctType === 1 ? cmd.market : '' };
}

export class OpeningLineCheck {
  /** Accepted borrows and transfers out checked on an account that owed something after them. */
  checked = 0;
  /** Of those, the ones whose account had resting orders losing against the marks. */
  withRestingLoss = 0;
  #marks = new Map<string, bigint | undefined>();
  /** Interest owed per coin before the command (a borrow charges its first hour). */
  #interestBefore = new Map<string, number>();

  /** Before the command is applied: the marks its limits read, and the account's interest. */
  before(engine: Engine, naive: NaiveEngine, cmd: SequencedCommand): void {
    const t = target(cmd);
    if (t === undefined) return;
    this.#marks = new Map(naive.marketNames().map((m) => [m, naive.risk.limitMark(m, cmd.time)]));
    const view = engine.margin.account(t.userId, t.acctType, t.market);
    this.#interestBefore = new Map((view?.coins ?? []).map((c) => [c.coin, c.interest]));
  }

  /** After it: an accepted one leaves the account at or above its opening line at those marks. */
  after(engine: Engine, cmd: SequencedCommand, result: string, where: string): void {
    const t = target(cmd);
    if (t === undefined || result !== 'OK') return;
    const view = engine.margin.account(t.userId, t.acctType, t.market);
    if (view === undefined) return;
    let assets: Frac = { n: 0n, d: 1n };
    let debt: Frac = { n: 0n, d: 1n };
    const add = (x: Frac, p: Frac, k: bigint): Frac => ({ n: x.n * p.d + p.n * k * x.d, d: x.d * p.d });
    for (const c of view.coins) {
      const held = BigInt(c.available + c.frozen);
      const charged = cmd.type === 'Borrow' ? c.interest - (this.#interestBefore.get(c.coin) ?? 0) : 0;
      const owed = BigInt(c.borrowed + c.interest - charged);
      if (held === 0n && owed === 0n) continue;
      const price = this.#price(engine, view.valuationCoin, t.market, c.coin);
      assert.ok(
        price !== undefined || owed === 0n,
        `${where}: accepted with a debt in ${c.coin} without a price`,
      );
      if (price === undefined) continue;
      assets = add(assets, price, held);
      debt = add(debt, price, owed);
    }
    if (debt.n === 0n) return;
    // What the resting orders of the account could hand over beyond the marks, in the valuation coin.
    let losing = false;
    for (const o of engine.openOrders(t.userId)) {
      if (o.acctType !== t.acctType || (t.acctType === 1 && o.market !== t.market)) continue;
      const mark = this.#marks.get(o.market);
      const spec = engine.market(o.market);
      if (mark === undefined || spec === undefined) continue;
      const gap = o.side === BUY ? BigInt(o.price) - mark : mark - BigInt(o.price);
      if (gap <= 0n) continue;
      const quote = engine.coin(spec.quote);
      const perTickLot = BigInt(quoteUnitsPerTickLot(spec, quote as NonNullable<typeof quote>));
      const price = this.#price(engine, view.valuationCoin, t.market, spec.quote);
      assert.ok(
        price !== undefined,
        `${where}: accepted with a resting loss in ${spec.quote} without a price`,
      );
      assets = add(assets, price, -(gap * BigInt(o.amount - o.filled) * perTickLot));
      losing = true;
    }
    this.checked++;
    if (losing) this.withRestingLoss++;
    assert.ok(
      assets.n * debt.d * BP >= START_LINE_BP * debt.n * assets.d,
      `${where}: ${JSON.stringify(cmd)} left the account at ${Number((assets.n * debt.d * BP) / (debt.n * assets.d)) / 10_000}, below its opening line at the marks ${JSON.stringify([...this.#marks].map(([m, p]) => [m, String(p)]))}`,
    );
  }

  /** Valuation-coin units per unit of `coin` at the marks read before the command. */
  #price(engine: Engine, valuationCoin: string, market: string, coin: string): Frac | undefined {
    if (coin === valuationCoin) return { n: 1n, d: 1n };
    const unit = (name: string): Frac | undefined => {
      const spec = engine.market(name);
      const mark = this.#marks.get(name);
      if (spec === undefined || mark === undefined || mark <= 0n) return undefined;
      const shift =
        (engine.coin(spec.quote)?.unitDecimal as number) -
        spec.priceScale -
        (engine.coin(spec.base)?.unitDecimal as number);
      return shift >= 0 ? { n: mark * 10n ** BigInt(shift), d: 1n } : { n: mark, d: 10n ** BigInt(-shift) };
    };
    if (market !== '') return engine.market(market)?.base === coin ? unit(market) : undefined;
    const markets = engine.markets();
    const paths = new ValuationPaths(
      markets.map((m) => ({ ...m, baseDecimal: 0, quoteDecimal: 0 })),
      valuationCoin,
    );
    const legs = paths.path(coin);
    if (legs === undefined) return undefined;
    let price: Frac = { n: 1n, d: 1n };
    for (const leg of legs) {
      const p = unit(leg.market);
      if (p === undefined) return undefined;
      price = leg.invert ? { n: price.n * p.d, d: price.d * p.n } : { n: price.n * p.n, d: price.d * p.d };
    }
    return price;
  }
}
