/**
 * Issue 29's attacks on the mark and its fast fall, through the engine's commands, on the default
 * venue with `markRule: 'depth'` (src/margin/depth-mark.ts): a sweep and wash prints, one tiny
 * print far away, and a real fall of 29 % in some 8 s with a buyer always 0.1 % under the trades.
 * On the `median` rule (issue 15's mark, kept for a genesis written before issue 29) the first two
 * liquidate the victim and the third leaves bad debt (run this file with `RULE = 'median'` to see
 * it). The figures docs/margin.md gives of these runs are asserted here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { BUY, SELL, type Command, type PlaceOrder } from '../domain/commands.ts';
import type { MarkRule } from '../domain/specs.ts';
import type { ApplyResult } from './engine.ts';

const RULE: MarkRule = 'depth';
const VENUE = { ...DEFAULT_VENUE, settings: { ...DEFAULT_VENUE.settings, markRule: RULE } };
const USDT = 1_000_000;
const BTC = 100_000_000;
/** Prices in ticks (cents), amounts in lots (0.0001 btc). */
const px = (usdt: number): number => Math.round(usdt * 100);
const lots = (btc: number): number => Math.round(btc * 10_000);

class Checked extends EngineDriver {
  override apply(cmd: Command): ApplyResult {
    const r = super.apply(cmd);
    this.engine.assertInvariants();
    return r;
  }
}

const must = (d: EngineDriver, cmd: Command): ApplyResult => {
  const r = d.apply(cmd);
  assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
  return r;
};

const order = (
  userId: number,
  side: 0 | 1,
  price: number,
  amount: number,
  extra: Partial<PlaceOrder> = {},
): Command => ({
  type: 'PlaceOrder',
  userId,
  market: 'btc_usdt',
  side,
  kind: 'limit',
  price,
  amount,
  acctType: 0,
  clientOrderId: '',
  ...extra,
});

const margin = (cmd: Record<string, unknown>): Command => cmd as unknown as Command;

/**
 * A book around 30,000 (asks 30,100–30,500 and bids 29,900–29,500 of 0.06 btc, `mm`'s), the mark
 * at 30,000 (the first trade), and two victims at risk rate ≈ 1.33: alice long (1,000 usdt of her
 * own, 3,000 borrowed, 0.13 btc bought at 30,000) and dave short (1,000 usdt of his own, 0.1 btc
 * borrowed and sold at 30,000).
 */
function venue(withAsks = true): { d: Checked; alice: number; dave: number; mm: number } {
  const d = new Checked(VENUE);
  const alice = d.fund('alice', 'usdt', '1000');
  const dave = d.fund('dave', 'usdt', '1000');
  const mm = d.fund('mm', 'btc', '100');
  d.fund('mm', 'usdt', '6000000');
  must(d, {
    type: 'FundLendingPool',
    fundingId: 'pool-u',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  const lender = d.fund('lender', 'btc', '10');
  void lender;
  must(d, {
    type: 'FundLendingPool',
    fundingId: 'pool-b',
    coin: 'btc',
    amount: 10 * BTC,
    dailyRatePpm: 500,
    days: 10,
  });
  must(
    d,
    margin({
      type: 'MarginTransfer',
      userId: alice,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 1000 * USDT,
    }),
  );
  must(
    d,
    margin({
      type: 'Borrow',
      userId: alice,
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 3000 * USDT,
      rollOver: false,
    }),
  );
  must(d, order(mm, SELL, px(30_000), lots(0.13)));
  must(d, order(alice, BUY, px(30_000), lots(0.13), { acctType: 1 }));
  must(
    d,
    margin({
      type: 'MarginTransfer',
      userId: dave,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 1000 * USDT,
    }),
  );
  must(
    d,
    margin({
      type: 'Borrow',
      userId: dave,
      acctType: 1,
      market: 'btc_usdt',
      coin: 'btc',
      amount: 0.1 * BTC,
      rollOver: false,
    }),
  );
  must(d, order(mm, BUY, px(30_000), lots(0.1)));
  must(d, order(dave, SELL, px(30_000), lots(0.1), { acctType: 1 }));
  for (let i = 0; i < 5; i++) {
    must(d, order(mm, BUY, px(29_900 - 100 * i), lots(0.06)));
    if (withAsks) must(d, order(mm, SELL, px(30_100 + 100 * i), lots(0.06)));
  }
  assert.equal(d.engine.risk.markPrice('btc_usdt'), px(30_000));
  const rate = (u: number) => d.engine.risk.accountRisk(u, 'btc_usdt')?.riskRateBp as number;
  assert.ok(rate(alice) > 13_200 && rate(alice) < 13_400, `alice at ${rate(alice)}`);
  assert.ok(rate(dave) > 13_200 && rate(dave) < 13_400, `dave at ${rate(dave)}`);
  return { d, alice, dave, mm };
}

describe('issue 29: the mark resists manipulation and follows a real fall (markRule depth)', () => {
  test('a sweep of the bids, then 28 alternating tiny wash prints at 22,500, liquidates nobody', () => {
    const { d, alice, dave } = venue();
    const eve = d.fund('eve', 'btc', '1');
    const mal = d.fund('mal', 'usdt', '10000');
    must(d, order(eve, SELL, px(29_500), lots(0.3), { kind: 'ioc' })); // the sweep
    // A real sale of 0.3 btc, its five trades within 1 % of the mark (docs/margin.md's figures).
    assert.equal(d.engine.risk.markPrice('btc_usdt'), px(29_736.6));
    for (let i = 0; i < 28; i++) {
      must(d, order(mal, BUY, px(22_500), lots(0.0003)));
      must(d, order(eve, SELL, px(22_500), lots(0.0003)));
    }
    const mark = d.engine.risk.markPrice('btc_usdt') as number;
    assert.ok(mark > px(29_400), `mark ${mark}`);
    // Each print counts 2 lots at the 1 % edge: the 28 take the mark down by 9.33 only.
    assert.equal(mark, px(29_727.27));
    assert.deepEqual(d.engine.liquidations(), []);
    for (const u of [alice, dave]) assert.equal(d.engine.risk.isLocked(u, 'btc_usdt'), false);
    assert.equal(d.engine.risk.accountRisk(alice, 'btc_usdt')?.riskRateBp, 13_189);
  });

  test('one print of 0.0001 btc at 200,000 into an empty ask side liquidates nobody', () => {
    const { d, alice, dave } = venue(false);
    const eve = d.fund('eve', 'usdt', '100');
    const mal = d.fund('mal', 'btc', '1');
    must(d, order(mal, SELL, px(200_000), lots(0.0001)));
    must(d, order(eve, BUY, px(200_000), lots(0.0001)));
    must(d, order(mal, SELL, px(48_000), lots(0.1))); // the ask the short's liquidation would buy
    const mark = d.engine.risk.markPrice('btc_usdt') as number;
    assert.ok(mark < px(30_010), `mark ${mark}`);
    // Counted as one lot at the 1 % edge, 30,300, against a window of 3,334 lots.
    assert.equal(mark, px(30_000.08));
    assert.equal(d.engine.risk.accountRisk(dave, 'btc_usdt')?.riskRateBp, 13_313);
    assert.deepEqual(d.engine.liquidations(), []);
    for (const u of [alice, dave]) assert.equal(d.engine.risk.isLocked(u, 'btc_usdt'), false);
  });

  test('a real fall, 30,000 → 21,279.65 in about 8 s with a 0.4 btc bid 0.1 % under every trade, liquidates with no bad debt', () => {
    const { d, alice, mm } = venue(false);
    const sam = d.fund('sam', 'btc', '200');
    // Clear the book's own bids: the fall is the walk's.
    must(d, order(sam, SELL, px(29_500), lots(0.3), { kind: 'ioc' }));
    const down = (p: number) => Math.floor((p * 999) / 1000);
    let bid = px(29_500);
    must(d, order(mm, BUY, down(bid), lots(0.4)));
    let steps = 0;
    let withinBand = true;
    while (bid > px(21_279.65)) {
      bid = down(bid);
      d.time += 22;
      must(d, order(mm, BUY, down(bid), lots(0.4))); // the buyer 0.1 % under the next trade
      must(d, order(sam, SELL, bid, lots(0.4), { kind: 'ioc' })); // the trade at `bid`
      steps++;
      const mark = d.engine.risk.markPrice('btc_usdt') as number;
      const best = d.engine.depth('btc_usdt', 1)?.bids[0]?.[0];
      if (best !== undefined && best < Math.ceil((mark * 97) / 100)) withinBand = false;
    }
    assert.ok(steps > 300 && d.time - 0 > 0);
    assert.ok(withinBand, 'bids stood within the band all the way');
    const [rec, ...more] = d.engine.liquidations();
    assert.equal(more.length, 0);
    assert.ok(rec !== undefined);
    assert.equal(rec.status, 'done');
    for (const c of rec.coins) {
      assert.equal(c.shortfall, 0, `${c.coin} shortfall`);
      assert.equal(c.badDebt, 0, `${c.coin} bad debt`);
    }
    // Begun at her line (unwind 24,202.77), within a step's move.
    assert.ok(
      rec.markAtStart <= px(24_202.77) && rec.markAtStart > px(24_202.77 * 0.998),
      `${rec.markAtStart}`,
    );
    const usdt = d.engine.margin.account(alice, 1, 'btc_usdt')?.coins.find((c) => c.coin === 'usdt');
    assert.equal(usdt?.borrowed, 0);
    assert.ok((usdt?.available ?? 0) > 100 * USDT, `left ${usdt?.available}`);
    // docs/margin.md's worked fast fall: begun at the mark 24,198.34, 205.222964 usdt left to her.
    assert.equal(rec.markAtStart, px(24_198.34));
    assert.equal(usdt?.available, 205_222_964);
  });

  test('property: a fall through a book whose bids stand within the band liquidates before the equity is gone', () => {
    let held = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dropPpm: fc.integer({ min: 1_000, max: 9_000 }),
            sell: fc.integer({ min: lots(0.1), max: lots(1) }),
            bid: fc.integer({ min: lots(0.2), max: lots(1) }),
            underPpm: fc.integer({ min: 500, max: 5_000 }),
          }),
          { minLength: 30, maxLength: 60 },
        ),
        (steps) => {
          const { d, mm } = venue(false);
          d.fund('mm', 'usdt', '100000000');
          const sam = d.fund('sam', 'btc', '1000');
          must(d, order(sam, SELL, px(29_500), lots(0.3), { kind: 'ioc' }));
          let price = px(29_500);
          let withinBand = true;
          for (let k = 0; price > px(21_000); k++) {
            const s = steps[k % steps.length] as (typeof steps)[number];
            price = Math.floor((price * (1_000_000 - s.dropPpm)) / 1_000_000);
            d.time += 25;
            // The trade: `s.sell` at `price`, and every bid above it (the last step's buyer under
            // its trade) sold into on the way; then a buyer under it: the book always has a bid.
            must(d, order(mm, BUY, price, s.sell));
            const above = (d.engine.depth('btc_usdt', 100)?.bids ?? [])
              .filter(([p]) => p >= price)
              .reduce((sum, [, l]) => sum + l, 0);
            must(d, order(sam, SELL, price, above, { kind: 'ioc' }));
            must(d, order(mm, BUY, Math.floor((price * (1_000_000 - s.underPpm)) / 1_000_000), s.bid));
            const mark = d.engine.risk.markPrice('btc_usdt');
            const best = d.engine.depth('btc_usdt', 1)?.bids[0]?.[0];
            if (mark !== undefined && (best === undefined || best < Math.ceil((mark * 97) / 100)))
              withinBand = false;
          }
          if (!withinBand) return;
          held++;
          const recs = d.engine.liquidations();
          assert.equal(recs.length, 1, 'the long liquidated on the way down (the short gains)');
          for (const r of recs)
            for (const c of r.coins)
              assert.equal(c.badDebt + c.shortfall, 0, `${c.coin} of liquidation ${r.id}`);
        },
      ),
      { numRuns: 10 },
    );
    assert.ok(held > 0, 'some falls kept their bids within the band');
  });
});
