/**
 * @module price-shocks — command sequences for the differential run's risk side (issue 15):
 * leveraged isolated positions, and price shocks that move a market sharply so that those
 * positions cross their notice and liquidation lines.
 *
 * - **Leverage** (`leveragedPosition`): a user moves some quote (a long) or base (a short) into an
 *   isolated account, borrows 2–3.9 times as much of it, and spends it all on the other coin with
 *   an IOC order against a maker placed just before by another user. Its risk rate starts at
 *   1.26–1.5: a move of 10–25 % against it reaches the notice line (1.13) or the liquidation
 *   line (1.08), and a larger one leaves a shortfall.
 * - **Shock** (`priceShock`): a burst of trades from one level to another 5–35 % away (makers at
 *   each step, takers through them), then quotes on both sides of the new level so that
 *   liquidations find a book inside their band. Four in ten jump more than the mark's 5-minute
 *   window before the last trades: the mark gaps there at once, and a liquidation sells below the
 *   account's bankruptcy price (insurance, then bad debt). The others slide: the mark follows
 *   over the next trades. Shocks lean back towards the market's starting price: recoveries.
 *
 * Only spot accounts of rich users make the markets here; cross accounts are left alone (the
 * generator keeps their debts small: see `CommandGenerator`).
 */
import type { Command, PlaceOrder, Side } from '../../src/domain/commands.ts';

/** Uniform choices (the generator's seeded `Rng`). */
export interface ShockRng {
  int(lo: number, hi: number): number;
  chance(percent: number): boolean;
}

/** The market as the generator plans it. */
export interface ShockMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly startMid: number;
  mid: number;
  readonly minLots: number;
  readonly lotUnits: number;
  readonly tickLotUnits: number;
}

/** A command and, when set, the time step (ms) to take before it instead of a random one. */
export interface Scheduled {
  readonly cmd: Command;
  readonly dtMs?: number;
}

/** More than the mark's 5-minute window: a jump after which only new trades count. */
const GAP_MS = 330_000;

export const limit = (
  userId: number,
  market: string,
  side: Side,
  price: number,
  amount: number,
): PlaceOrder => ({
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

/**
 * The users whose isolated accounts hold leveraged positions: odd ones long, even ones short in
 * every market (a position adds to the one before, never hedges it); 1–4 with six users or more,
 * else 1–2. The generator's other margin commands leave their isolated accounts alone, so that
 * nothing dilutes the leverage.
 */
export function leverUsers(users: number): readonly number[] {
  return users >= 6 ? [1, 2, 3, 4] : [1, 2];
}

/** A rich user (1 … users − 1; the last user is poor) other than `not`. */
export function richBut(rng: ShockRng, users: number, not: number): number {
  const u = rng.int(1, users - 2);
  return u >= not ? u + 1 : u;
}

/** Two distinct rich users. */
export function twoRich(rng: ShockRng, users: number): [number, number] {
  const a = rng.int(1, users - 1);
  return [a, richBut(rng, users, a)];
}

/**
 * A leveraged isolated position of a rich user: transfer in, borrow, and one IOC order of the
 * margin account against a maker placed just before. `equityOf(coin)` is what moves in (quote for
 * a long, base for a short); `fundingId` names a pool funding sent first so that the borrow finds
 * lenders. `how` (the band walks', fast-walks.ts): long or short (by default long 60 % of the
 * time), the borrow in tenths of the equity (by default 2.8–3.9), and the IOC's price through the
 * mid in percent (by default 1).
 */
export function leveragedPosition(
  rng: ShockRng,
  m: ShockMarket,
  users: number,
  equityOf: (coin: string) => number,
  fundingId: string,
  how: {
    readonly long?: boolean;
    readonly tenths?: readonly [number, number];
    readonly through?: number;
  } = {},
): Scheduled[] {
  const long = how.long ?? rng.chance(60);
  const trader = 2 * rng.int(0, leverUsers(users).length / 2 - 1) + (long ? 1 : 2);
  const maker = richBut(rng, users, trader);
  const coin = long ? m.quote : m.base;
  const equityUnits = equityOf(coin);
  const [fewest, most] = how.tenths ?? [28, 39];
  const borrowed = Math.floor((equityUnits * rng.int(fewest, most)) / 10);
  const total = equityUnits + borrowed;
  const out: Scheduled[] = [
    {
      cmd: {
        type: 'FundLendingPool',
        fundingId,
        coin,
        amount: borrowed * 2,
        dailyRatePpm: 500 + 100 * rng.int(0, 5),
        days: 30,
      },
    },
    {
      cmd: {
        type: 'MarginTransfer',
        userId: trader,
        direction: 'in',
        acctType: 1,
        market: m.name,
        coin,
        amount: equityUnits,
      },
    },
    {
      cmd: {
        type: 'Borrow',
        userId: trader,
        acctType: 1,
        market: m.name,
        coin,
        amount: borrowed,
        rollOver: false,
      },
    },
  ];
  // Spend 97 % of it at 1 % through the mid (a buy freezes its limit price).
  const through = how.through ?? 1;
  const price = long
    ? Math.ceil((m.mid * (100 + through)) / 100)
    : Math.floor((m.mid * (100 - through)) / 100);
  const lots = long
    ? Math.floor((total * 0.97) / (price * m.tickLotUnits))
    : Math.floor((total * 0.97) / m.lotUnits);
  if (lots < m.minLots || price < 1) return out;
  const side: Side = long ? 1 : 0;
  out.push({ cmd: limit(maker, m.name, long ? 0 : 1, m.mid, lots) });
  out.push({
    cmd: { ...limit(trader, m.name, side, price, lots), kind: 'ioc', acctType: 1, express: false },
  });
  return out;
}

/**
 * A burst of trades moving the market's mid 5–35 % (down or up, leaning back towards its start),
 * then quotes around the new level. Sets `m.mid` to the new level.
 */
export function priceShock(rng: ShockRng, m: ShockMarket, users: number): Scheduled[] {
  const down = m.mid > m.startMid ? rng.chance(75) : m.mid < m.startMid ? rng.chance(25) : rng.chance(50);
  const pct = rng.int(5, 35);
  const from = m.mid;
  const to = Math.min(
    2 * m.startMid,
    Math.max(Math.floor(m.startMid / 2), Math.round((from * (down ? 100 - pct : 100 + pct)) / 100)),
  );
  const steps = rng.int(4, 10);
  const gap = rng.chance(40);
  const out: Scheduled[] = [];
  // Makers on the side the move runs into; takers cross them (and whatever stands before them).
  const makerSide: Side = down ? 1 : 0;
  for (let k = 1; k <= steps + 2; k++) {
    const price = Math.max(1, k >= steps ? to : Math.round(from + ((to - from) * k) / steps));
    const [maker, taker] = twoRich(rng, users);
    const lots = m.minLots * rng.int(1, 6);
    out.push({
      cmd: limit(maker, m.name, makerSide, price, lots),
      ...(gap && k === steps ? { dtMs: GAP_MS } : {}),
    });
    out.push({ cmd: { ...limit(taker, m.name, makerSide === 1 ? 0 : 1, price, lots), kind: 'ioc' } });
  }
  // A book on both sides of the new level, inside a liquidation's 3 % band.
  const [bidder, asker] = twoRich(rng, users);
  out.push({
    cmd: limit(bidder, m.name, 1, Math.max(1, Math.floor((to * 995) / 1000)), m.minLots * rng.int(20, 60)),
  });
  out.push({ cmd: limit(asker, m.name, 0, Math.ceil((to * 1005) / 1000), m.minLots * rng.int(20, 60)) });
  m.mid = to;
  return out;
}
