/**
 * The bot author's report against a hand computation (issue 35): fills made through the real
 * engine, projected into a real (SQLite) history store, and the report read back from it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { reportRoutes } from '../api/admin/report-routes.ts';
import { answering } from '../api/admin/admin-reply.ts';
import type { ApiRequest, VenuePort } from '../api/http/types.ts';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { BUY, SELL, type Command } from '../domain/commands.ts';
import { Engine } from '../engine/engine.ts';
import { SqliteHistoryStore } from '../store/sqlite-history-store.ts';
import { accountReport, unitsText } from './account-report.ts';
import { readReport } from './report-source.ts';

const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/**
 * alice's fills (btc_usdt: price 2 decimals, amount 4; btc 8 decimals, usdt 6; fees 0.2 %); with
 * `oneMs`, every command of the period in the same millisecond (a fast clock).
 */
async function scenario(oneMs = false) {
  const engine = new Engine(DEFAULT_VENUE);
  const history = SqliteHistoryStore.open(':memory:');
  let seq = 0;
  const run = async (at: number, command: Command) => {
    const time = oneMs && at > T0 + 2000 ? T0 + 3000 : at;
    const r = engine.apply({ ...command, seq: ++seq, time } as Parameters<Engine['apply']>[0]);
    assert.equal(r.result, 'OK', `${command.type}: ${r.message ?? ''}`);
    await history.applyBatch([{ seq, time, events: r.events }]);
    return r;
  };
  const order = (userId: number, side: 0 | 1, price: number, amount: number): Command => ({
    ...{ type: 'PlaceOrder', userId, market: 'btc_usdt', side, kind: 'limit' },
    ...{
      price: Math.round(price * 100),
      amount: Math.round(amount * 10_000),
      acctType: 0,
      clientOrderId: '',
    },
  });
  const credit = (userId: number, coin: string, units: number, id: string): Command => ({
    ...{ type: 'CreditDeposit', depositId: id, userId, coin, amount: units, remark: '' },
  });
  for (const name of ['alice', 'bob', 'carol']) await run(T0, { type: 'RegisterUser', name });
  await run(T0, credit(1, 'usdt', 100_000e6, 'a'));
  await run(T0, credit(2, 'btc', 10e8, 'b1'));
  await run(T0, credit(2, 'usdt', 100_000e6, 'b2'));
  await run(T0, credit(3, 'btc', 1e8, 'c'));
  // Before the period: alice buys 0.5 btc at 30000 (bob's ask).
  await run(T0 + 1000, order(2, SELL, 30_000, 0.5));
  await run(T0 + 1000, order(1, BUY, 30_000, 0.5));
  // In the period: alice sells 0.2 at 31000 to bob; buys 0.1 at 29000 from bob; carol sells bob 0.01 at 28000.
  await run(T0 + 3000, order(1, SELL, 31_000, 0.2));
  await run(T0 + 3000, order(2, BUY, 31_000, 0.2));
  await run(T0 + 4000, order(1, BUY, 29_000, 0.1));
  await run(T0 + 4000, order(2, SELL, 29_000, 0.1));
  await run(T0 + 5000, order(2, BUY, 28_000, 0.01));
  await run(T0 + 5000, order(3, SELL, 28_000, 0.01));
  return { engine, history };
}

describe("the bot author's report", () => {
  test('equals the hand computation over the fills', async () => {
    const { engine, history } = await scenario();
    const from = T0 + 2000;
    const to = T0 + 6000;
    const r = await readReport({ engine, history }, 1, 'btc_usdt', from, to);

    // By hand, in usdt and btc:
    // At the start alice holds 0.5 − 0.001 (the 0.2 % fee, in btc) = 0.499 btc, bought for 15000,
    // and 100000 − 15000 = 85000 usdt; the mark is 30000 (the last trade before the period).
    //   cost basis C = 0.499 × 30000 = 14970; start value = 85000 + 14970 = 99970.
    // Fill 1 (t+3 s): sells 0.2 at 31000: value 6200, fee 0.2 % = 12.4 usdt.
    //   cost removed = 14970 × 0.2 / 0.499 = 6000; realised = 6200 − 12.4 − 6000 = 187.6.
    //   C = 8970, position 0.299, usdt 85000 + 6200 − 12.4 = 91187.6.
    // Fill 2 (t+4 s): buys 0.1 at 29000: value 2900, fee 0.0002 btc = 5.8 usdt at 29000.
    //   C = 8970 + 2900 = 11870, position 0.299 + 0.1 − 0.0002 = 0.3988, usdt 88287.6.
    // The mark ends at 28000 (carol's trade with bob).
    //   unrealised = 0.3988 × 28000 − 11870 = 11166.4 − 11870 = −703.6.
    //   end value = 88287.6 + 11166.4 = 99454 = 99970 + 187.6 − 703.6.
    // Fees 12.4 + 5.8 = 18.2; turnover 6200 + 2900 = 9100; two fills, one buy, one sell.
    // Value over time: 99970 (start); 85000 + 0.499 × 31000 = 100469 at the 31000 trade (the peak);
    //   100456.6 after fill 1; 91187.6 + 0.299 × 29000 = 99858.6 at the 29000 trade; 99852.8 after
    //   fill 2; 99454 at the 28000 trade. Largest drawdown 100469 − 99454 = 1015, 1015 / 100469 =
    //   1.01 % (rounded down), from t+3 s to t+5 s.
    assert.equal(r.fills, 2);
    assert.equal(r.buys, 1);
    assert.equal(r.sells, 1);
    assert.equal(r.turnover, '9100');
    assert.deepEqual(r.fees, { quote: '18.2', other: {} });
    assert.equal(r.realisedPnl, '187.6');
    assert.equal(r.unrealisedPnl, '-703.6');
    assert.equal(r.position, '0.3988');
    assert.equal(r.startPrice, '30000');
    assert.equal(r.endPrice, '28000');
    assert.equal(r.startValue, '99970');
    assert.equal(r.endValue, '99454');
    assert.equal(r.netFlows, '0');
    assert.deepEqual(r.maxDrawdown, { amount: '1015', percent: '1.01', from: T0 + 3000, to: T0 + 5000 });
    assert.deepEqual(
      r.series.map((p) => [p.time - T0, p.value, p.price]),
      [
        [2000, '99970', '30000'],
        [3000, '100469', '31000'],
        [3000, '100456.6', '31000'],
        [4000, '99858.6', '29000'],
        [4000, '99852.8', '29000'],
        [5000, '99454', '28000'],
        [6000, '99454', '28000'],
      ],
    );
    // The whole life: from the first bill, the 0.001 btc fee of the first buy (30 usdt) counts too.
    const all = await readReport({ engine, history }, 1, undefined, 0, to);
    assert.equal(all.market, 'btc_usdt', 'the one market alice traded');
    assert.equal(all.fills, 3);
    assert.deepEqual(all.fees, { quote: '48.2', other: {} });
    assert.equal(all.turnover, '24100');
    assert.equal(all.netFlows, '100000', 'her deposit is no profit');
    assert.equal(all.startValue, '0');
    assert.equal(all.endValue, '99454');
    // realised + unrealised = end value − start value − net deposits: 99454 − 0 − 100000 = −546.
    assert.equal(Number(all.realisedPnl) + Number(all.unrealisedPnl), -546);
    assert.equal(all.maxDrawdown.amount, '1015', 'the deposit is no peak: the same drawdown');
    // No start given: the period starts at her first bill (the deposit), not in 1970 at no price.
    const life = await readReport({ engine, history }, 1, undefined, undefined, to);
    assert.equal(life.from, T0);
    assert.deepEqual(life.series[0], { time: T0, value: '0', price: '0' });
    assert.deepEqual(
      { ...life, from: 0, series: life.series.slice(1) },
      { ...all, series: all.series.slice(1) },
    );
    await history.close();
  });

  test('commands in one millisecond are read in engine order: each fill after its own trade', async () => {
    // The first test's period, every command at t+3 s: the same figures and the same values in the
    // same order (were the millisecond's three trades played before alice's first bill, her fills
    // would be valued at 28000 and the peak of 100469 never seen).
    const { engine, history } = await scenario(true);
    const r = await readReport({ engine, history }, 1, 'btc_usdt', T0 + 2000, T0 + 6000);
    assert.equal(r.realisedPnl, '187.6');
    assert.equal(r.unrealisedPnl, '-703.6');
    assert.deepEqual(r.maxDrawdown, { amount: '1015', percent: '1.01', from: T0 + 3000, to: T0 + 3000 });
    assert.deepEqual(
      r.series.map((p) => [p.time - T0, p.value, p.price]),
      [
        [2000, '99970', '30000'],
        [3000, '100469', '31000'],
        [3000, '100456.6', '31000'],
        [3000, '99858.6', '29000'],
        [3000, '99852.8', '29000'],
        [3000, '99454', '28000'],
        [6000, '99454', '28000'],
      ],
    );
    await history.close();
  });

  test('deposits and withdrawals of the coins are no profit and no drawdown', () => {
    const market = DEFAULT_VENUE.markets[0] as (typeof DEFAULT_VENUE.markets)[0];
    const bill = (
      id: number,
      coin: string,
      change: number,
      balance: number,
      billType: 'deposit' | 'withdraw',
    ) => ({
      ...{
        id,
        userId: 1,
        coin,
        change,
        balance,
        available: balance,
        frozen: 0,
        billType,
        ref: 'x',
        time: 10 + id,
      },
    });
    const r = accountReport({
      ...{ market, baseDecimals: 8, quoteDecimals: 6, decimalsOf: () => 8, from: 0, to: 100 },
      bills: [bill(1, 'usdt', 1000e6, 1000e6, 'deposit'), bill(2, 'usdt', -400e6, 600e6, 'withdraw')],
      trades: [],
    });
    assert.equal(r.netFlows, '600');
    assert.equal(r.realisedPnl, '0');
    assert.equal(r.maxDrawdown.amount, '0');
    assert.equal(unitsText(-1234n, 3), '-1.234');
    assert.equal(unitsText(5n, 3), '0.005');
  });

  test('the admin route refuses a bad period, an unknown market and a user who traded nowhere', async () => {
    const { engine, history } = await scenario();
    const venue: VenuePort = {
      engine,
      history,
      now: () => T0 + 10_000,
      submit: () => Promise.reject(new Error('reads only')),
    };
    const route = reportRoutes({ venue })[0] as ReturnType<typeof reportRoutes>[0];
    const call = async (params: Record<string, string>) => {
      const request: ApiRequest = {
        ...{ method: 'POST', path: '/admin/report', ip: '127.0.0.1', headers: {}, receivedAt: 0 },
        params: Object.entries(params).map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      };
      return ((await answering(route.handler)(request)) as { json: Record<string, unknown> }).json;
    };
    const ok = await call({ user: 'alice', from: String(T0 + 2000), to: String(T0 + 6000) });
    assert.equal(ok.code, 1000);
    assert.equal(ok.user, 'alice');
    assert.equal(ok.realisedPnl, '187.6');
    for (const [params, says] of [
      [{ user: 'alice', from: 'yesterday' }, /from 'yesterday' must be a time in ms/],
      [{ user: 'alice', from: '5', to: '4' }, /ends .* before it starts/],
      [{ user: 'alice', market: 'doge_usdt' }, /unknown market 'doge_usdt'/],
      [{ user: 'carol', from: String(T0 + 5001) }, /made no trade in the period: name the market/],
      [{ user: 'nobody' }, /no user named 'nobody'/],
    ] as const) {
      const r = await call(params);
      assert.notEqual(r.code, 1000, JSON.stringify(params));
      assert.match(String(r.message), says);
    }
    await history.close();
  });
});
