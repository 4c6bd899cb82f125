/**
 * Issue 29 §1 through the signed API: the pool-drain attempt of the issue — an attacker's print at
 * 60,000 from an accomplice's ask in a book around 30,000 — moves no limit the answers show
 * (`fCanLoanIn`, `couldTransferOutFiat`, `canTransferOut`) nor any the calls enforce (`borrow`,
 * `transferOutLever`, `doCrossLoan`, `transferOutCross`): all are valued at the mark. Refusals
 * carry the interface's code and leave the state hash as it was.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL } from '../../../domain/commands.ts';
import { limitOrder } from '../../../../test/fixtures/engine-driver.ts';
import { USDT } from '../../../../test/fixtures/liquidation-venue.ts';
import { SignedApiHarness, type Credentials } from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

/** A book around 30,000 (bids from 29,900), a trade at 30,000, and a borrower keeping btc_usdt marked. */
async function venue(): Promise<{ h: SignedApiHarness; mallory: Credentials; ids: Record<string, number> }> {
  const h = new SignedApiHarness();
  const v = h.venue;
  const bob = await v.fund('bob', 'usdt', '1000000');
  const trent = await v.fund('trent', 'btc', '1');
  const carol = await v.fund('carol', 'usdt', '1000');
  const mallory = await v.fund('mallory', 'btc', '0.2');
  await v.fund('mallory', 'usdt', '10');
  await v.must({
    type: 'FundLendingPool',
    fundingId: 'pool',
    coin: 'usdt',
    amount: 100_000 * USDT,
    dailyRatePpm: 500,
    days: 10,
  });
  await v.must(limitOrder(bob, BUY, 2_990_000, 5000));
  await v.must(limitOrder(trent, SELL, 3_000_000, 100));
  await v.must(limitOrder(bob, BUY, 3_000_000, 100));
  for (const [acctType, market] of [
    [1, 'btc_usdt'],
    [2, ''],
  ] as const)
    await v.must({
      type: 'MarginTransfer',
      userId: mallory,
      direction: 'in',
      acctType,
      market,
      coin: 'btc',
      amount: 10_000_000,
    });
  await v.must({
    type: 'MarginTransfer',
    userId: carol,
    direction: 'in',
    acctType: 1,
    market: 'btc_usdt',
    coin: 'usdt',
    amount: 1000 * USDT,
  });
  await v.must({
    type: 'Borrow',
    userId: carol,
    acctType: 1,
    market: 'btc_usdt',
    coin: 'usdt',
    amount: 1000 * USDT,
    rollOver: false,
  });
  return { h, mallory: await h.key(mallory), ids: { bob, trent, carol, mallory } };
}

async function call(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Json = {},
): Promise<Json> {
  return (await h.call(method, creds, params as Record<string, string>)) as Json;
}

async function lever(h: SignedApiHarness, creds: Credentials): Promise<Json> {
  const body = await call(h, creds, 'getLeverAssetsInfo');
  return ((body.message as Json).datas as { levers: Json[] }).levers.find((l) => l.key === 'btcusdt') as Json;
}

async function crossUsdt(h: SignedApiHarness, creds: Credentials): Promise<Json> {
  const body = await call(h, creds, 'getCrossAssets');
  const list = (body.result as Json).list as Json[];
  return list.find((c) => String(c.key).toLowerCase() === 'usdt') as Json;
}

/** The engine's state but its sequence number (a refused command is journaled too). */
const state = (h: SignedApiHarness): string => JSON.stringify({ ...h.venue.engine.snapshot(), lastSeq: 0 });

/** A call the engine refuses: its code and message, and nothing changed. */
async function refused(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Json,
  code: number,
  message: RegExp,
): Promise<void> {
  const before = state(h);
  const body = await call(h, creds, method, params);
  assert.equal(body.code, code, `${method} → ${JSON.stringify(body)}`);
  assert.match(String(body.message), message);
  assert.equal(state(h), before, `${method} changed the state`);
}

describe('limits at the mark through the signed API (issue 29 §1)', () => {
  test('the print at 60,000 moves no limit of an isolated or a cross account; the pool keeps its money', async () => {
    const { h, mallory, ids } = await venue();
    const engine = h.venue.engine;
    assert.equal(engine.risk.markPrice('btc_usdt'), 3_000_000);
    assert.equal((await lever(h, mallory)).fCanLoanIn, '12000.000000000000000');

    // The attack: 0.0001 btc bought at 60,000 from the accomplice's ask.
    await h.venue.must(limitOrder(ids.trent as number, SELL, 6_000_000, 1));
    await h.venue.must(limitOrder(ids.mallory as number, BUY, 6_000_000, 1));
    assert.equal(engine.lastPrice('btc_usdt'), 6_000_000);
    const mark = engine.risk.markPrice('btc_usdt') as number;
    assert.ok(mark < 6_000_000, `mark ${mark}`);
    // 4 × 0.1 btc at the mark (ticks of 0.01 usdt), not 4 × 6,000 = 24,000.
    const limit = (4 * 0.1 * mark) / 100;
    let l = await lever(h, mallory);
    assert.equal(l.fCanLoanIn, `${limit.toFixed(6)}000000000`);
    await refused(
      h,
      mallory,
      'borrow',
      { coin: 'usdt', marketName: 'btcusdt', amount: '24000' },
      2009,
      /over the limit/,
    );
    await refused(h, mallory, 'doCrossLoan', { coin: 'usdt', amount: '24000' }, 2009, /over the limit/);

    // Borrowing 4,800 keeps the money in the account; moving it out is held to the opening line at the mark.
    for (const [method, params] of [
      ['borrow', { coin: 'usdt', marketName: 'btcusdt', amount: '4800' }],
      ['doCrossLoan', { coin: 'usdt', amount: '4800' }],
    ] as const)
      assert.equal((await call(h, mallory, method, params)).code, 1000, method);
    l = await lever(h, mallory);
    const room = Number(l.couldTransferOutFiat);
    const cross = await crossUsdt(h, mallory);
    assert.equal(Number(cross.canTransferOut), room, 'cross and isolated hold the same and owe the same');
    // (0.1 × mark + 4,800) − 1.25 × 4,800.1, in usdt units (0.1 btc at `mark` ticks of 0.01 usdt is
    // mark × 1,000 units), shown to 3 decimals, truncated: the 4,799.875 of the last price would
    // empty the pool.
    const roomUnits = mark * 1_000 + 4800 * USDT - 6_000_125_000;
    assert.equal(room, Math.floor(roomUnits / 1_000) / 1_000);
    assert.ok(room < 4799.875, `room ${room}`);
    await refused(
      h,
      mallory,
      'transferOutLever',
      { coin: 'usdt', marketName: 'btcusdt', amount: '4799.875' },
      2009,
      /over the limit/,
    );
    await refused(
      h,
      mallory,
      'transferOutCross',
      { coin: 'usdt', amount: '4799.875' },
      2009,
      /over the limit/,
    );
    for (const [method, params] of [
      ['transferOutLever', { coin: 'usdt', marketName: 'btcusdt', amount: String(room) }],
      ['transferOutCross', { coin: 'usdt', amount: String(room) }],
    ] as const)
      assert.equal((await call(h, mallory, method, params)).code, 1000, method);
    // At the opening line at the mark, both accounts.
    assert.equal(engine.risk.accountRisk(ids.mallory as number, 'btc_usdt')?.riskRateBp, 12_500);
    assert.equal(engine.risk.crossRisk(ids.mallory as number).riskRateBp, 12_500);
    engine.assertInvariants();
  });

  test('an order resting far from the mark, placed while nothing was owed, counts in fCanLoanIn, couldTransferOutFiat, borrow and transferOutLever', async () => {
    const { h, mallory, ids } = await venue();
    const v = h.venue;
    const id = ids.mallory as number;
    await v.fund('mallory', 'usdt', '3000');
    await v.must({
      type: 'MarginTransfer',
      userId: id,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 3000 * USDT,
    });
    // Owing nothing, she rests a margin buy of 0.05 btc at 60,000 (no ask below it): its fill would
    // hand the seller 0.05 × (60,000 − 30,000) = 1,500 usdt beyond the mark.
    await v.must(limitOrder(id, BUY, 6_000_000, 500, { acctType: 1 }));
    // 0.1 btc (3,000) + 3,000 usdt at the mark, less the 1,500: 4 × 4,500, not 4 × 6,000.
    assert.equal((await lever(h, mallory)).fCanLoanIn, '18000.000000000000000');
    await refused(
      h,
      mallory,
      'borrow',
      { coin: 'usdt', marketName: 'btcusdt', amount: '18000.01' },
      2009,
      /over the limit of 18000/,
    );
    assert.equal(
      (await call(h, mallory, 'borrow', { coin: 'usdt', marketName: 'btcusdt', amount: '18000' })).code,
      1000,
    );
    // 24,000 − 1,500 = 22,500 < 1.25 × 18,000.375: nothing may leave (the last version let 1,499.53 out).
    assert.equal(Number((await lever(h, mallory)).couldTransferOutFiat), 0);
    await refused(
      h,
      mallory,
      'transferOutLever',
      { coin: 'usdt', marketName: 'btcusdt', amount: '1' },
      2009,
      /over the limit of 0 usdt/,
    );
    v.engine.assertInvariants();
  });
});
