/**
 * The risk side through the signed API (issue 15): `riskRate` at the mark, `unwindPrice`, the
 * notice flag (`level` 2), `repayLock` and `level` 3 while a liquidation runs, the lock on the loan
 * records, the liquidation's bills carrying its record, and getCrossAssets' `level`/`repayLock`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY } from '../../../domain/commands.ts';
import { limitOrder } from '../../../../test/fixtures/engine-driver.ts';
import { gap, longVenue, tradeAt } from '../../../../test/fixtures/liquidation-venue.ts';
import { SignedApiHarness, type Credentials } from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

async function ok(h: SignedApiHarness, creds: Credentials, method: string, params: Json = {}): Promise<Json> {
  const body = (await h.call(method, creds, params as Record<string, string>)) as Json;
  assert.equal(body.code, 1000, `${method} → ${JSON.stringify(body)}`);
  return body;
}

async function lever(h: SignedApiHarness, creds: Credentials): Promise<Json> {
  const body = await ok(h, creds, 'getLeverAssetsInfo');
  const levers = ((body.message as Json).datas as { levers: Json[] }).levers;
  return levers.find((l) => l.key === 'btcusdt') as Json;
}

/** Alice long 0.13 btc at 30,000 on 3,000 borrowed usdt (test/fixtures/liquidation-venue.ts). */
async function venue(): Promise<{
  h: SignedApiHarness;
  alice: Credentials;
  ids: { alice: number; bob: number; carol: number };
}> {
  const h = new SignedApiHarness();
  const { alice, bob, carol } = await longVenue(h.venue);
  return { h, alice: await h.key(alice), ids: { alice, bob, carol } };
}

describe('the risk side in the margin answers', () => {
  test('riskRate at the mark and unwindPrice; flagged at the notice line (level 2); locked while liquidated (level 3, repayLock)', async () => {
    const { h, alice, ids } = await venue();
    let l = await lever(h, alice);
    // 100 usdt + 0.12974 btc × 30,000 = 3,992.2 against 3,000.0625 owed (the first hour's interest).
    assert.equal(l.riskRate, '1.3307');
    // (1.08 × 3,000.0625 − 100) ÷ 0.12974 = 24,202.77…, rounded down to a tick.
    assert.equal(l.unwindPrice, '24202.77');
    assert.deepEqual([l.level, l.repayLock], [1, false]);

    // A slow slide: 0.5 btc trades (a window each) 100 usdt lower each time; the mark follows.
    const engine = h.venue.engine;
    let price = 2_990_000;
    while (engine.risk.accountRisk(ids.alice, 'btc_usdt')?.notice !== true) {
      await tradeAt(h.venue, ids.bob, ids.carol, price);
      price -= 10_000;
      assert.ok(price > 2_000_000, 'the notice line was never reached');
    }
    l = await lever(h, alice);
    assert.deepEqual([l.level, l.repayLock], [2, false]);
    assert.ok(Number(l.riskRate) <= 1.13 && Number(l.riskRate) > 1.08, `riskRate ${String(l.riskRate)}`);
    assert.equal(engine.liquidations().length, 0, 'flagged before any liquidation');

    while (engine.liquidations().length === 0) {
      await tradeAt(h.venue, ids.bob, ids.carol, price);
      price -= 10_000;
      assert.ok(price > 1_000_000, 'the liquidation line was never reached');
    }
    // No bid inside the band: the liquidation waits, the account locked.
    l = await lever(h, alice);
    assert.deepEqual([l.level, l.repayLock], [3, true]);
    const records = (await ok(h, alice, 'getLoanRecords', { marketName: 'btcusdt' })).result as Json[];
    assert.deepEqual(
      records.map((r) => [r.status, r.inUserLock]),
      [[3, true]],
    );
    const refused = (await h.call('transferOutLever', alice, {
      coin: 'usdt',
      marketName: 'btcusdt',
      amount: '1',
    })) as Json;
    assert.equal(refused.code, 3005);
    assert.match(String(refused.message), /locked by its liquidation \(repayLock\)/);

    // Liquidity inside the band finishes it in the command that brings it: no debt, unlocked.
    const mark = engine.risk.markPrice('btc_usdt') as number;
    await h.venue.must(limitOrder(ids.bob, BUY, mark, 2000));
    l = await lever(h, alice);
    assert.deepEqual([l.riskRate, l.level, l.repayLock, l.fLoanIn], ['-', 1, false, '0.000000']);
  });

  test('a gap through the line: the fee bill names the liquidation and carries its record', async () => {
    const { h, alice, ids } = await venue();
    await h.venue.must(limitOrder(ids.bob, BUY, 2_340_000, 2000)); // 0.2 btc bid at 23,400
    await gap(h.venue, ids.bob, ids.carol);
    const bills = (await ok(h, alice, 'getLeverBills', { marketName: 'BTC/USDT', pageSize: '50' }))
      .result as Json[];
    const fee = bills.find((b) => b.typeDesc === 'liquidation fee') as Json;
    assert.equal(fee.remark, 'liquidation 1');
    assert.equal(fee.changeAmount, '-30.000625 USDT');
    const record = fee.liquidation as Json;
    // At the mark 24,049.02 (the gap's 22 windows, 1 % each): (100 + 0.12974 × 24,049.02) ÷
    // 3,000.0625 = 1.07335…
    assert.deepEqual(
      [record.id, record.acctType, record.marketName, record.status, record.markPrice, record.riskRate],
      [1, 1, 'btcusdt', 'done', '24049.02', '1.0733'],
    );
    assert.deepEqual(record.orders, [
      {
        time: record.startTime,
        side: 'sell',
        price: '23327.55', // ⌈24,049.02 × 0.97⌉, the band's edge
        amount: '0.12970000',
        filled: '0.12970000',
      },
    ]);
    assert.deepEqual(
      (record.coins as Json[]).find((c) => c.coin === 'usdt'),
      {
        coin: 'usdt',
        repaid: '3000.062500',
        shortfall: '0.000000',
        insurance: '0.000000',
        badDebt: '0.000000',
        fee: '30.000625',
      },
    );
    // Its repayments carry the record too; bills of other kinds do not.
    const repays = bills.filter((b) => String(b.typeDesc).startsWith('repay'));
    assert.ok(repays.length > 0);
    assert.ok(repays.every((b) => (b.liquidation as Json | undefined)?.id === 1));
    assert.ok(bills.filter((b) => b.typeDesc === 'borrow').every((b) => b.liquidation === undefined));
  });

  test('getCrossAssets shows level and repayLock beside riskRate', async () => {
    const { h, alice } = await venue();
    const result = (await ok(h, alice, 'getCrossAssets')).result as Json;
    assert.deepEqual([result.riskRate, result.level, result.repayLock], ['-', 1, false]);
  });

  test('getCrossAssets reads the engine’s cross flag and lock: level 2 at the notice line, 3 and repayLock while liquidated; getCrossRepayRecords lists the liquidation’s repayments', async () => {
    const h = new SignedApiHarness();
    const ids = await longVenue(h.venue, 2);
    const alice = await h.key(ids.alice);
    const cross = async (): Promise<Json> => (await ok(h, alice, 'getCrossAssets')).result as Json;
    let r = await cross();
    // 100 usdt + 0.12974 btc at the mark 30,000 against 3,000.0625 usdt owed.
    assert.deepEqual([r.riskRate, r.level, r.repayLock], ['1.3307', 1, false]);
    const engine = h.venue.engine;
    let price = 2_990_000;
    while (!engine.risk.crossRisk(ids.alice).notice) {
      await tradeAt(h.venue, ids.bob, ids.carol, price);
      price -= 10_000;
      assert.ok(price > 2_000_000, 'the notice line was never reached');
    }
    r = await cross();
    assert.deepEqual([r.level, r.repayLock], [2, false]);
    assert.ok(Number(r.riskRate) <= 1.13 && Number(r.riskRate) > 1.08, `riskRate ${String(r.riskRate)}`);
    while (engine.liquidations().length === 0) {
      await tradeAt(h.venue, ids.bob, ids.carol, price);
      price -= 10_000;
      assert.ok(price > 1_000_000, 'the liquidation line was never reached');
    }
    r = await cross();
    assert.deepEqual([r.level, r.repayLock], [3, true]);
    const refused = (await h.call('doCrossLoan', alice, { coin: 'usdt', amount: '1' })) as Json;
    assert.notEqual(refused.code, 1000, 'a locked cross account borrows nothing');
    // A bid inside the band finishes it in the command that brings it (issue 29 §4), no timer.
    const mark = engine.risk.markPrice('btc_usdt') as number;
    await h.venue.must(limitOrder(ids.bob, BUY, mark, 2000));
    r = await cross();
    assert.deepEqual([r.riskRate, r.level, r.repayLock, r.loanIn], ['-', 1, false, 0]);
    const repaid = (await ok(h, alice, 'getCrossRepayRecords', { coin: 'usdt' })).result as Json[];
    assert.ok(repaid.length > 0, `getCrossRepayRecords: ${JSON.stringify(repaid)}`);
  });
});
