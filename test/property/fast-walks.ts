/**
 * @module fast-walks — issue 29's fast walks for the differential run's risk side: a market walks
 * 8–30 steps of 0.2–0.9 % each in one direction (leaning back towards its starting price, as the
 * shocks do, and never beyond 20 % of it), each step one trade of about a mark window's value (2,000–2,600 minimum orders)
 * between two rich users, a few tens of milliseconds apart, with another rich user resting
 * 0.1–0.5 % beyond each trade with one to four windows' worth (a bid under it in a fall, an ask
 * over it in a rise). The `depth`
 * mark follows such a walk trade by trade, so leveraged positions are liquidated on the way, into
 * the book inside their band (band-check.ts checks what that leaves).
 */
import {
  leveragedPosition,
  limit,
  richBut,
  twoRich,
  type Scheduled,
  type ShockMarket,
  type ShockRng,
} from './price-shocks.ts';

export function fastWalk(rng: ShockRng, m: ShockMarket, users: number): Scheduled[] {
  const down = m.mid > m.startMid ? rng.chance(75) : m.mid < m.startMid ? rng.chance(25) : rng.chance(50);
  const steps = rng.int(8, 30);
  const out: Scheduled[] = [];
  // Makers on the side the walk runs into (bids in a fall), takers cross them.
  const makerSide = down ? 1 : 0;
  let price = m.mid;
  for (let k = 0; k < steps; k++) {
    const perMille = rng.int(2, 9);
    const next = Math.round((price * (down ? 1_000 - perMille : 1_000 + perMille)) / 1_000);
    // Within 20 % of the starting price: the leveraged positions (risk rates 1.26–1.5) reach their
    // lines, the generator's cross accounts (kept far from theirs, never liquidated by the
    // reference) do not.
    price = Math.min(
      Math.floor((m.startMid * 6) / 5),
      Math.max(Math.ceil((m.startMid * 4) / 5), Math.max(1, next)),
    );
    const [maker, taker] = twoRich(rng, users);
    const lots = m.minLots * rng.int(2_000, 2_600);
    out.push({ cmd: limit(maker, m.name, makerSide, price, lots), dtMs: rng.int(10, 40) });
    out.push({
      cmd: { ...limit(taker, m.name, makerSide === 1 ? 0 : 1, price, lots), kind: 'ioc' },
      dtMs: 1,
    });
    const beyond = rng.int(1, 5);
    const rest = Math.max(1, Math.round((price * (down ? 1_000 - beyond : 1_000 + beyond)) / 1_000));
    const [resting] = twoRich(rng, users);
    out.push({ cmd: limit(resting, m.name, makerSide, rest, m.minLots * rng.int(2_000, 8_000)), dtMs: 1 });
  }
  m.mid = price;
  return out;
}

/**
 * A band walk: a leveraged position opened at the touch (long when the market stands at or above
 * its start, short otherwise), then a walk against it of 0.6–0.9 % a step for 25 % (within the
 * shocks' bounds), so that it crosses its liquidation line on the way (opened at some 1.29–1.31,
 * its line is 1.08: about 17 % away). Each step: a bid (an ask in a rise) resting 0.1–0.5 %
 * beyond the step's price, big enough for the position twice over; the step's maker at its
 * price (both by one rich user); and another's taker through the previous step's resting order
 * and the maker (neither user the position's). So whenever the mark crosses a line, the book
 * holds a buyer inside the band for the whole position: the liquidation begins and ends in that
 * command, after a mark move under 1 %, and band-check.ts applies — these walks are what make it
 * apply (the differential test asserts how many it checked).
 */
export function bandWalk(
  rng: ShockRng,
  m: ShockMarket,
  users: number,
  equityOf: (coin: string) => number,
  fundingId: string,
  top: { readonly bid: number | undefined; readonly ask: number | undefined },
): Scheduled[] {
  const long = m.mid >= m.startMid;
  // The position trades at the book's touch on its side (a long buys at the best ask, behind which
  // its maker rests): a maker at a stale mid could cross the other side and leave nothing to take.
  const touch = long ? top.ask : top.bid;
  if (touch !== undefined) m.mid = touch;
  // Borrowed 3.2–3.5 times the equity, bought (sold) at the touch: a risk rate of some 1.29–1.31,
  // room for the mark to stand a little off it (the order-loss check would refuse the order).
  const out = leveragedPosition(rng, m, users, equityOf, fundingId, { long, tenths: [32, 35], through: 0 });
  const last = out[out.length - 1]?.cmd;
  if (last?.type !== 'PlaceOrder' || last.acctType !== 1) return out; // too small to trade
  // Each step one user rests the bid (ask) and the maker, another takes: never the owner of an
  // order it reaches (self-trade prevention would stop it), nor the trader (whose own orders the
  // liquidation cancels). Users change from step to step, so that no one runs out of funds.
  const trader = last.userId;
  let restedBefore = trader;
  const down = long;
  // 25 % from the touch, within the shocks' bounds (half to twice the start).
  const end = down
    ? Math.max(Math.ceil(m.startMid / 2), Math.round((m.mid * 3) / 4))
    : Math.min(2 * m.startMid, Math.round((m.mid * 5) / 4));
  const makerSide = down ? 1 : 0;
  let price = m.mid;
  let before = 0;
  for (let k = 0; k < 60 && (down ? price > end : price < end); k++) {
    const perMille = rng.int(6, 9);
    const next = Math.round((price * (down ? 1_000 - perMille : 1_000 + perMille)) / 1_000);
    price = down ? Math.max(end, next) : Math.min(end, next);
    const beyond = rng.int(1, 5);
    const rest = Math.max(1, Math.round((price * (down ? 1_000 - beyond : 1_000 + beyond)) / 1_000));
    const resting = richBut(rng, users, trader);
    let taker = richBut(rng, users, trader);
    for (let t = 0; (taker === resting || taker === restedBefore) && t < 8; t++)
      taker = richBut(rng, users, trader);
    if (taker === resting || taker === restedBefore) break;
    restedBefore = resting;
    const restLots = Math.max(m.minLots * rng.int(1_000, 2_000), last.amount * 2);
    out.push({ cmd: limit(resting, m.name, makerSide, rest, restLots), dtMs: rng.int(10, 40) });
    const lots = m.minLots * rng.int(1_000, 1_300);
    out.push({ cmd: limit(resting, m.name, makerSide, price, lots), dtMs: 1 });
    out.push({
      cmd: { ...limit(taker, m.name, makerSide === 1 ? 0 : 1, price, lots + before), kind: 'ioc' },
      dtMs: 1,
    });
    before = restLots;
  }
  m.mid = price;
  return out;
}
