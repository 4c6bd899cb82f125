/**
 * The risk side on the WebSocket (issue 15): a mark moved by other people's trades crosses an
 * account's notice line and its owner gets one push naming the account with `level` 2; the lock of a
 * liquidation (`level` 3, `repayLock`) and its end are pushed too; a cross account's notice and
 * lock (the engine's, at the marks) reach push_user_cross_asset and push_user_incr_asset.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BUY, SELL, type Command } from '../../domain/commands.ts';
import { limitOrder } from '../../../test/fixtures/engine-driver.ts';
import { openLong, tradeAt, USDT } from '../../../test/fixtures/liquidation-venue.ts';
import { WsTestClient, signedSubscription, type Message } from '../../../test/fixtures/ws-client.ts';
import { nextTick, WsHarness } from '../../../test/fixtures/ws-harness.ts';

const h = new WsHarness();
let base = '';
before(async () => {
  base = await h.listen();
});
after(async () => {
  await h.close();
});

/** A client subscribed to the user's margin pushes, their snapshots taken. */
async function watching(userId: number): Promise<WsTestClient> {
  const { accessKey, secret } = h.key(userId);
  const c = await WsTestClient.connect(`${base}/websocket`);
  c.send(signedSubscription('push_user_incr_asset', accessKey, secret));
  c.send(signedSubscription('push_user_cross_asset', accessKey, secret));
  await c.onChannel('push_user_incr_asset', 'userIncrAsset');
  await c.onChannel('push_user_cross_asset', 'userCrossAsset');
  return c;
}

const isolatedPush = (m: Message): boolean =>
  m?.channel === 'push_user_incr_asset' && m.acctType === 1 && m.marketName === 'btcusdt';

describe('risk pushes', () => {
  test('the notice line, the lock and the end of a liquidation reach push_user_incr_asset', async () => {
    const alice = h.user('alice', [['usdt', '2000']]);
    const bob = h.user('bob', [
      ['btc', '5'],
      ['usdt', '2000000'],
    ]);
    const carol = h.user('carol', [['btc', '50']]);
    await openLong(h, alice, bob);
    const c = await watching(alice);

    // Bob and carol trade lower and lower (a mark window each): alice's balances never change, her mark does.
    let price = 2_990_000;
    while (h.engine.risk.accountRisk(alice, 'btc_usdt')?.notice !== true) {
      await tradeAt(h, bob, carol, price);
      price -= 10_000;
      assert.ok(price > 2_000_000, 'the notice line was never reached');
    }
    const flagged = await c.take((m) => isolatedPush(m) && m.level === 2, 5_000, 'the notice push');
    assert.equal(flagged.repayLock, false);
    assert.ok(Number(flagged.riskRate) <= 1.13, flagged.riskRate);
    assert.deepEqual(
      flagged.coins.map((x: { key: string }) => x.key),
      ['btc', 'usdt'],
    );
    await nextTick();
    assert.deepEqual(c.queued.filter(isolatedPush), [], 'pushed once, not at every tick while flagged');

    // Down to the liquidation line: no bid inside the band, so the account waits, locked.
    while (h.engine.liquidations().length === 0) {
      await tradeAt(h, bob, carol, price);
      price -= 10_000;
      assert.ok(price > 1_000_000, 'the liquidation line was never reached');
    }
    const locked = await c.take((m) => isolatedPush(m) && m.level === 3, 5_000, 'the lock push');
    assert.equal(locked.repayLock, true);
    assert.deepEqual([locked.lastLiquidation.id, locked.lastLiquidation.status], [1, 'running']);
    assert.equal(flagged.lastLiquidation, null);

    // Liquidity inside the band finishes it in the command that brings it: the account's balances
    // move, unlocked.
    h.must(limitOrder(bob, BUY, h.engine.risk.markPrice('btc_usdt') as number, 2000));
    const done = await c.take((m) => isolatedPush(m) && m.repayLock === false, 5_000, 'the end push');
    assert.deepEqual([done.level, done.riskRate], [1, '-']);
    assert.deepEqual([done.lastLiquidation.id, done.lastLiquidation.status], [1, 'done']);
    assert.ok(done.lastLiquidation.endTime >= done.lastLiquidation.startTime);
    const usdt = done.coins.find((x: { key: string }) => x.key === 'usdt');
    assert.deepEqual([usdt.loanIn, usdt.overdraft], ['0.000000', '0.000000']);
    await c.close();
  });

  test('a cross account at its notice line: push_user_cross_asset and push_user_incr_asset say level 2', async () => {
    const frank = h.user('frank', [['usdt', '1000']]);
    const gina = h.user('gina', [
      ['btc', '5'],
      ['usdt', '3000000'],
    ]);
    const hugo = h.user('hugo', [['btc', '60']]);
    h.must({
      type: 'FundLendingPool',
      fundingId: 'pool-btc',
      coin: 'btc',
      amount: 10 * 100_000_000,
      dailyRatePpm: 500,
      days: 10,
    });
    h.must({
      type: 'MarginTransfer',
      userId: frank,
      direction: 'in',
      acctType: 2,
      market: '',
      coin: 'usdt',
      amount: 1000 * USDT,
    });
    await tradeAt(h, gina, hugo, 3_000_000); // a price for btc: 30,000
    h.must({
      type: 'Borrow',
      userId: frank,
      acctType: 2,
      market: '',
      coin: 'btc',
      amount: 10_000_000,
      rollOver: false,
    } as Command);
    // Frank sells the 0.1 btc he borrowed (short): 1,000 + 3,000 usdt against 0.1 btc owed.
    h.must(limitOrder(gina, BUY, 3_000_000, 1000));
    h.must(limitOrder(frank, SELL, 3_000_000, 1000, { acctType: 2 }));
    const c = await watching(frank);
    let price = 3_010_000;
    // The engine's flag, at the marks (which lag the last trades a little).
    while (!h.engine.risk.crossRisk(frank).notice) {
      await tradeAt(h, gina, hugo, price);
      price += 10_000;
      assert.ok(price < 4_000_000, 'the notice line was never reached');
    }
    const cross = await c.take(
      (m) => m?.channel === 'push_user_cross_asset' && m.level === 2,
      5_000,
      'the cross notice push',
    );
    assert.equal(cross.repayLock, false);
    const incr = await c.take(
      (m) => m?.channel === 'push_user_incr_asset' && m.acctType === 2 && m.level === 2,
      5_000,
      'the cross account on push_user_incr_asset',
    );
    assert.equal(incr.riskRate, cross.riskRate);
    // Up to the liquidation line: no ask inside the band, so the cross account waits, locked.
    while (!h.engine.risk.crossRisk(frank).repayLock) {
      await tradeAt(h, gina, hugo, price);
      price += 10_000;
      assert.ok(price < 5_000_000, 'the liquidation line was never reached');
    }
    await nextTick();
    const locked = await c.take(
      (m) => m?.channel === 'push_user_cross_asset' && m.level === 3,
      5_000,
      'the cross lock push',
    );
    assert.equal(locked.repayLock, true);
    await c.close();
  });
});
