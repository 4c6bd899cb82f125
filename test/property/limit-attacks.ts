/**
 * @module limit-attacks — command sequences for the differential run that aim at the margin
 * limits (issue 29 §1): a print far from the market, then borrowing and moving out what the
 * limits show, and a little more. Kept apart from price-shocks.ts (the liquidation side's).
 *
 * - **Spike** (`spikeAttack`, one round): an accomplice rests the least the venue takes at twice
 *   (or half) the mid; the attacker's IOC takes everything priced better and then it — a single
 *   small print far away (the order book never holds a better price than the one printed).
 * - **Wash** (`spikeAttack`, 2–6 rounds): the same, the accomplice's maker and the attacker's
 *   taker again and again at that price: a run of small prints by a pair who trade with each other.
 *
 * Before the print the attacker (a rich user whose isolated account no leveraged position uses)
 * moves some of the coin the print flatters into its isolated account (base for a high print,
 * quote for a low one) and the pool is funded; after it, on that account: a borrow of one unit
 * more than its borrowing limit (refused), a borrow of the limit, a transfer out of one unit more
 * than its transfer limit (refused) and one of the limit — each amount read off the reference's
 * state when the step is sent (`make`). Its cross account only tries the refused amounts (cross
 * accounts must stay clear of their liquidation line: see `GeneratorOptions.shocks`).
 * - **Resting** (`restingAttack`): while its isolated account owes nothing (so no order is held
 *   at placement), the attacker rests a large margin order on the losing side of the mark: a buy
 *   one tick under the best ask, or a sell one tick over the best bid (a fill there would hand the
 *   counterparty what lies between its price and the mark); then the same limit attempts — which
 *   must count that order's loss (src/engine/resting-loss.ts).
 * `limit-check.ts` then checks that no accepted borrow or transfer left an account below its
 * opening line at the marks the limits read, after its resting orders' worst fills.
 */
import { BUY, SELL, type Command, type PlaceOrder, type Side } from '../../src/domain/commands.ts';
import type { Scheduled, ShockMarket, ShockRng } from './price-shocks.ts';

/** What the attack reads of the reference when a step is sent. */
export interface AttackView {
  /** A side of a market's book in priority order (remaining lots and price, ticks). */
  book(
    market: string,
    side: Side,
  ): readonly {
    readonly userId: number;
    readonly price: bigint | number;
    readonly remaining: bigint | number;
  }[];
  readonly margin: {
    borrowLimit(account: string, coin: string): bigint;
    transferLimit(account: string, coin: string): bigint | undefined;
  };
}

/** Whether the generator's view (the reference engine) can be read as an attack needs. */
export function isAttackView(view: object): view is AttackView {
  const v = view as Partial<AttackView>;
  return typeof v.book === 'function' && typeof v.margin?.transferLimit === 'function';
}

/** A step whose command is made when it is sent (undefined: skipped). */
export interface MadeStep {
  readonly make: (view: AttackView) => Command | undefined;
}

export type AttackStep = Scheduled | MadeStep;

const limit = (userId: number, market: string, side: Side, price: number, amount: number): PlaceOrder => ({
  type: 'PlaceOrder',
  userId,
  market,
  side,
  kind: 'limit',
  price,
  amount,
  acctType: 0,
  clientOrderId: '',
});

/** Most lots an attacker's IOC takes on its way to the print (more: the print is left out). */
const MAX_SWEEP_LOTS = 5_000;

/**
 * A spike (rounds 1) or wash trades (rounds 2–6) far from the mid of `m`, then the limit attempts.
 * `attacker` and `accomplice` are distinct rich users; `equityOf(coin)` is what moves in.
 */
export function spikeAttack(
  rng: ShockRng,
  m: ShockMarket,
  attacker: number,
  accomplice: number,
  equityOf: (coin: string) => number,
  fundingId: string,
): AttackStep[] {
  const high = rng.chance(60);
  const price = Math.max(1, high ? m.mid * 2 : Math.floor(m.mid / 2));
  const rounds = rng.chance(50) ? 1 : rng.int(2, 6);
  const held = high ? m.base : m.quote;
  const owed = high ? m.quote : m.base;
  const out: AttackStep[] = [
    {
      cmd: {
        type: 'FundLendingPool',
        fundingId,
        coin: owed,
        amount: equityOf(owed) * 8,
        dailyRatePpm: 500,
        days: 30,
      },
    },
    {
      cmd: {
        type: 'MarginTransfer',
        userId: attacker,
        direction: 'in',
        acctType: 1,
        market: m.name,
        coin: held,
        amount: equityOf(held),
      },
    },
  ];
  // The accomplice's maker on the side the print comes from; the attacker's taker through it.
  const makerSide: Side = high ? 0 : 1;
  for (let k = 0; k < rounds; k++) {
    out.push({ cmd: limit(accomplice, m.name, makerSide, price, m.minLots) });
    out.push({
      make: (view) => {
        // Everything priced better than the print first (the accomplice's maker comes last).
        let lots = 0;
        for (const o of view.book(m.name, makerSide)) {
          const p = Number(o.price);
          if (high ? p > price : p < price) break;
          if (o.userId === attacker) return undefined; // would stop at its own order
          lots += Number(o.remaining);
        }
        if (lots === 0 || lots > MAX_SWEEP_LOTS) return undefined;
        return { ...limit(attacker, m.name, high ? 1 : 0, price, lots), kind: 'ioc' };
      },
    });
  }
  out.push(...limitAttempts(attacker, m.name, owed));
  return out;
}

/**
 * On the attacker's isolated account of `market` (and the refused amounts on its cross account):
 * a borrow of one unit of `owed` over the limit, one of the limit, a transfer out of one unit over
 * the transfer limit, one of it, and the over-limit ones again.
 */
function limitAttempts(attacker: number, market: string, owed: string): AttackStep[] {
  const attempt = (acctType: 1 | 2, over: boolean): AttackStep[] => {
    const name = acctType === 1 ? `i:${attacker}:${market}` : `c:${attacker}`;
    const where = acctType === 1 ? market : '';
    return [
      {
        make: (view) => {
          const amount = Number(view.margin.borrowLimit(name, owed)) + (over ? 1 : 0);
          if (amount <= 0) return undefined;
          return {
            type: 'Borrow',
            userId: attacker,
            acctType,
            market: where,
            coin: owed,
            amount,
            rollOver: false,
          };
        },
      },
      {
        make: (view) => {
          const room = view.margin.transferLimit(name, owed);
          if (room === undefined) return undefined;
          const amount = Number(room) + (over ? 1 : 0);
          if (amount <= 0) return undefined;
          return {
            type: 'MarginTransfer',
            userId: attacker,
            direction: 'out',
            acctType,
            market: where,
            coin: owed,
            amount,
          };
        },
      },
    ];
  };
  return [...attempt(1, true), ...attempt(1, false), ...attempt(1, true), ...attempt(2, true)];
}

/**
 * A large margin order resting on the losing side of the mark, placed while the attacker's
 * isolated account owes nothing, then the limit attempts (see the module comment).
 */
export function restingAttack(
  rng: ShockRng,
  m: ShockMarket,
  attacker: number,
  equityOf: (coin: string) => number,
  fundingId: string,
): AttackStep[] {
  const buy = rng.chance(50);
  const held = buy ? m.quote : m.base;
  const owed = buy ? m.base : m.quote;
  return [
    {
      cmd: {
        type: 'FundLendingPool',
        fundingId,
        coin: owed,
        amount: equityOf(owed) * 8,
        dailyRatePpm: 500,
        days: 30,
      },
    },
    {
      cmd: {
        type: 'MarginTransfer',
        userId: attacker,
        direction: 'in',
        acctType: 1,
        market: m.name,
        coin: held,
        amount: equityOf(held),
      },
    },
    {
      make: (view) => {
        // One tick inside the spread on the side of the order: it rests, at the top of the book.
        const opposite = view.book(m.name, buy ? SELL : BUY)[0];
        const same = view.book(m.name, buy ? BUY : SELL)[0];
        if (opposite === undefined || same === undefined) return undefined;
        const price = Number(buy ? opposite.price : same.price) + (buy ? -1 : 1);
        if (buy ? price <= Number(same.price) : price >= Number(opposite.price)) return undefined;
        // Most of what moved in (the account may already hold some from an earlier attack).
        const units = Math.floor((equityOf(held) * rng.int(50, 95)) / 100);
        const lots = Math.floor(units / (buy ? price * m.tickLotUnits : m.lotUnits));
        if (lots < m.minLots) return undefined;
        return { ...limit(attacker, m.name, buy ? BUY : SELL, price, lots), acctType: 1 };
      },
    },
    ...limitAttempts(attacker, m.name, owed),
  ];
}
