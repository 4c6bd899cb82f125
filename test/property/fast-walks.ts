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
import { limit, twoRich, type Scheduled, type ShockMarket, type ShockRng } from './price-shocks.ts';

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
