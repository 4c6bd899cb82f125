import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver, limitOrder } from '../../test/fixtures/engine-driver.ts';
import type { CoinFunds } from '../domain/chains.ts';
import { BUY, SELL, type Command, type PlaceOrder } from '../domain/commands.ts';
import type { CoinSpec, MarketSpec } from '../domain/specs.ts';
import { Engine } from './engine.ts';

const SOL: CoinSpec = {
  name: 'sol',
  unitDecimal: 8,
  enName: 'SOL',
  cnName: 'SOL',
  showName: 'SOL',
  fundsType: 90,
  canDeposit: true,
  canWithdraw: true,
};
const SOL_FUNDS: CoinFunds = {
  coin: 'sol',
  dailyWithdrawLimit: 1_000_00000000,
  autoApproveLimit: 10_00000000,
  chains: [
    {
      name: 'SOL',
      mainChain: 'SOL',
      memo: false,
      confirmations: 3,
      withdrawFee: 1_000_000,
      minWithdraw: 10_000_000,
      canDeposit: true,
      canWithdraw: true,
    },
  ],
};
const SOL_USDT: MarketSpec = {
  name: 'sol_usdt',
  base: 'sol',
  quote: 'usdt',
  priceScale: 2,
  amountScale: 2,
  minAmount: 1,
  minSize: 1_000_000,
  makerFee: -500,
  takerFee: 1_000,
  status: 'trading',
};

const place = (userId: number, market: string, side: 0 | 1, price: number, amount: number): PlaceOrder =>
  limitOrder(userId, side, price, amount, { market });

/** The state without the sequence position, which every command advances. */
const stateOf = (e: Engine): string => JSON.stringify({ ...e.snapshot(), lastSeq: 0 });

/** Applies `cmd` and checks it was refused with `result`, changing nothing. */
function refusedUnchanged(d: EngineDriver, cmd: Command, result: string, message?: RegExp): void {
  const before = stateOf(d.engine);
  const r = d.apply(cmd);
  assert.equal(r.result, result, `${cmd.type}: ${r.message ?? ''}`);
  if (message !== undefined) assert.match(r.message ?? '', message);
  assert.equal(r.events.length, 0);
  assert.equal(stateOf(d.engine), before, `${cmd.type} refused but changed the state`);
  d.engine.assertInvariants();
}

function must(d: EngineDriver, cmd: Command): void {
  const r = d.apply(cmd);
  assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
  d.engine.assertInvariants();
}

/** Every command of a runtime-change session, from a fresh default venue. */
function session(d: EngineDriver): void {
  const alice = d.fund('alice', 'usdt', '100000');
  must(d, { type: 'AddCoin', coin: SOL, funds: SOL_FUNDS });
  must(d, { type: 'AddMarket', market: SOL_USDT });
  const bob = d.fund('bob', 'sol', '100');
  must(d, place(bob, 'sol_usdt', SELL, 15_000, 1_000)); // 10 sol @ 150
  must(d, place(alice, 'sol_usdt', BUY, 15_000, 400)); // takes 4
  must(d, { type: 'ChangeMarket', market: { ...SOL_USDT, minSize: 2_000_000, takerFee: 2_000 } });
  must(d, { type: 'ChangeCoin', coin: { ...SOL, canWithdraw: false }, funds: SOL_FUNDS });
  must(d, { type: 'SetUserStatus', userId: alice, status: 'frozen' });
  must(d, { type: 'SetUserStatus', userId: alice, status: 'active' });
  must(d, { type: 'SetWithdrawLimit', userId: alice, coin: 'usdt', limit: 5_000_000 });
  must(d, { type: 'CancelUserOrders', userId: bob, market: '' });
  must(d, place(bob, 'sol_usdt', SELL, 16_000, 100));
  must(d, { type: 'CloseMarket', market: 'sol_usdt' });
  must(d, {
    type: 'CreateApiKey',
    userId: alice,
    accessKey: 'alice-key-1',
    sealedSecret: 'old',
    permissions: { asset: true, entrust: true, money: false, lever: false },
    ips: ['127.0.0.1'],
  });
  must(d, { type: 'RotateApiKey', accessKey: 'alice-key-1', sealedSecret: 'new' });
}

describe('runtime changes (issue 16)', () => {
  test('a coin added at run time, with its chain, can be credited, withdrawn and traded', () => {
    const d = new EngineDriver();
    must(d, { type: 'AddCoin', coin: SOL, funds: SOL_FUNDS });
    assert.deepEqual(d.engine.coin('sol'), SOL);
    assert.deepEqual(d.engine.funds.coinFunds('sol'), SOL_FUNDS);
    must(d, { type: 'AddMarket', market: SOL_USDT });
    const bob = d.fund('bob', 'sol', '5');
    d.payOut(bob, 'sol', 'sol-addr-1', 100_000_000);
    assert.equal(d.engine.balance(bob, 'sol')?.available, 5_00000000 - 100_000_000 - 1_000_000);
    const alice = d.fund('alice', 'usdt', '1000');
    must(d, place(bob, 'sol_usdt', SELL, 15_000, 100));
    must(d, place(alice, 'sol_usdt', BUY, 15_000, 100));
    assert.equal(d.engine.balance(alice, 'sol')?.available, 1_00000000 - 100_000); // less the 0.1% taker fee
  });

  test('bad coins are refused with their reason and change nothing', () => {
    const d = new EngineDriver();
    const btc = d.engine.coin('btc') as CoinSpec;
    refusedUnchanged(d, { type: 'AddCoin', coin: btc }, 'INVALID_PARAMETER', /coin btc exists/);
    refusedUnchanged(d, { type: 'AddCoin', coin: { ...SOL, name: 'Bad!' } }, 'INVALID_PARAMETER');
    refusedUnchanged(d, { type: 'AddCoin', coin: { ...SOL, unitDecimal: 16 } }, 'INVALID_PARAMETER');
    refusedUnchanged(
      d,
      { type: 'AddCoin', coin: SOL, funds: { ...SOL_FUNDS, chains: [] } },
      'INVALID_PARAMETER',
      /at least one chain/,
    );
    refusedUnchanged(
      d,
      { type: 'AddCoin', coin: SOL, funds: { ...SOL_FUNDS, coin: 'btc' } },
      'INVALID_PARAMETER',
    );
    refusedUnchanged(d, { type: 'ChangeCoin', coin: SOL }, 'UNKNOWN_COIN', /unknown coin 'sol'/);
    refusedUnchanged(d, { type: 'ChangeCoin', coin: { ...btc, unitDecimal: 6 } }, 'INVALID_STATE');
    const btcFunds = d.engine.funds.coinFunds('btc') as CoinFunds;
    refusedUnchanged(
      d,
      { type: 'ChangeCoin', coin: btc, funds: { ...btcFunds, chains: SOL_FUNDS.chains } },
      'INVALID_PARAMETER',
      /chain BTC of btc cannot be removed/,
    );
  });

  test("a coin's switches, fees and minimums change, and withdrawals follow them", () => {
    const d = new EngineDriver();
    const usdt = d.engine.coin('usdt') as CoinSpec;
    const funds = d.engine.funds.coinFunds('usdt') as CoinFunds;
    const chains = funds.chains.map((c) => ({
      ...c,
      withdrawFee: c.withdrawFee * 2,
      minWithdraw: 7_000_000,
    }));
    must(d, { type: 'ChangeCoin', coin: { ...usdt, enName: 'Tether' }, funds: { ...funds, chains } });
    assert.equal(d.engine.coin('usdt')?.enName, 'Tether');
    assert.equal(d.engine.funds.chain('usdt', chains[0]?.name ?? '')?.minWithdraw, 7_000_000);
    const alice = d.fund('alice', 'usdt', '100');
    assert.throws(() => d.payOut(alice, 'usdt', 'alice-out-1', 6_000_000), /BELOW_MIN_WITHDRAW/);
    must(d, { type: 'ChangeCoin', coin: { ...usdt, canWithdraw: false } });
    assert.throws(() => d.payOut(alice, 'usdt', 'alice-out-2', 8_000_000), /WITHDRAW_DISABLED/);
  });

  test('markets: added, changed, closed; bad ones refused', () => {
    const d = new EngineDriver();
    must(d, { type: 'AddCoin', coin: SOL });
    refusedUnchanged(
      d,
      { type: 'AddMarket', market: { ...SOL_USDT, makerFee: -1_500 } },
      'INVALID_PARAMETER',
      /rebate/,
    );
    refusedUnchanged(
      d,
      { type: 'AddMarket', market: { ...SOL_USDT, takerFee: 100_001 } },
      'INVALID_PARAMETER',
    );
    refusedUnchanged(
      d,
      { type: 'AddMarket', market: { ...SOL_USDT, base: 'nope', name: 'nope_usdt' } },
      'INVALID_PARAMETER',
      /unknown base coin/,
    );
    const btcUsdt = d.engine.market('btc_usdt') as MarketSpec;
    refusedUnchanged(d, { type: 'AddMarket', market: btcUsdt }, 'INVALID_PARAMETER', /exists/);
    refusedUnchanged(d, { type: 'ChangeMarket', market: SOL_USDT }, 'UNKNOWN_MARKET');
    refusedUnchanged(d, { type: 'ChangeMarket', market: { ...btcUsdt, priceScale: 1 } }, 'INVALID_STATE');
    refusedUnchanged(d, { type: 'CloseMarket', market: 'nope_usdt' }, 'UNKNOWN_MARKET');
    must(d, { type: 'AddMarket', market: SOL_USDT });
    must(d, { type: 'ChangeMarket', market: { ...btcUsdt, makerFee: 0, minAmount: 10 } });
    assert.equal(d.engine.market('btc_usdt')?.minAmount, 10);

    // Closing cancels every resting order and releases its funds.
    const bob = d.fund('bob', 'sol', '10');
    const alice = d.fund('alice', 'usdt', '1000');
    must(d, place(bob, 'sol_usdt', SELL, 20_000, 300));
    must(d, place(alice, 'sol_usdt', BUY, 10_000, 200));
    const r = d.apply({ type: 'CloseMarket', market: 'sol_usdt' });
    assert.equal(r.result, 'OK');
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['BalanceChanged', 'OrderUpdated', 'BalanceChanged', 'OrderUpdated', 'MarketStatusSet'],
    );
    assert.equal(d.engine.openOrders(bob).length + d.engine.openOrders(alice).length, 0);
    assert.deepEqual(d.engine.balance(bob, 'sol'), { available: 10_00000000, frozen: 0 });
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 1000_000000, frozen: 0 });
    assert.equal(d.engine.market('sol_usdt')?.status, 'closed');
    refusedUnchanged(d, place(bob, 'sol_usdt', SELL, 20_000, 300), 'MARKET_HALTED', /closed/);
    refusedUnchanged(d, { type: 'CloseMarket', market: 'sol_usdt' }, 'INVALID_STATE');
    refusedUnchanged(d, { type: 'SetMarketStatus', market: 'sol_usdt', status: 'trading' }, 'INVALID_STATE');
    refusedUnchanged(d, { type: 'ChangeMarket', market: SOL_USDT }, 'INVALID_STATE');
    refusedUnchanged(d, { type: 'UpsertMarket', market: SOL_USDT }, 'INVALID_STATE');
    d.engine.assertInvariants();
  });

  test('a maker rebate is paid out of fee income, never beyond it', () => {
    const d = new EngineDriver();
    must(d, { type: 'AddCoin', coin: SOL });
    must(d, { type: 'AddMarket', market: SOL_USDT }); // maker −0.05%, taker 0.1%
    const bob = d.fund('bob', 'sol', '100');
    const alice = d.fund('alice', 'usdt', '100000');
    // No usdt fee income yet: bob (maker, seller) gets no rebate; alice pays 0.1% of 4 sol.
    must(d, place(bob, 'sol_usdt', SELL, 15_000, 400));
    must(d, place(alice, 'sol_usdt', BUY, 15_000, 400));
    assert.equal(d.engine.feeIncome('sol'), 400_000);
    assert.equal(d.engine.balance(bob, 'usdt')?.available, 600_000000);
    // alice makes (buys) and bob takes: alice's rebate is 0.05% of 2 sol, from sol fee income.
    must(d, place(alice, 'sol_usdt', BUY, 15_000, 200));
    const r = d.apply(place(bob, 'sol_usdt', SELL, 15_000, 200));
    assert.equal(r.result, 'OK');
    const trade = r.events.find((e) => e.type === 'TradeExecuted');
    assert.ok(trade?.type === 'TradeExecuted');
    assert.equal(trade.makerFee, -100_000);
    assert.equal(trade.makerFeeCoin, 'sol');
    assert.equal(trade.takerFee, 300_000); // 0.1% of 300 usdt
    assert.equal(d.engine.feeIncome('sol'), 300_000);
    assert.equal(d.engine.feeIncome('usdt'), 300_000);
    assert.equal(d.engine.balance(alice, 'sol')?.available, 6_00000000 - 400_000 + 100_000);
    const totals = d.engine.totals('sol');
    assert.equal(totals?.users, 100_00000000n - 300_000n);
    d.engine.assertInvariants();
  });

  test('a frozen user cannot trade or withdraw, but reads and cancels work', () => {
    const d = new EngineDriver();
    const alice = d.fund('alice', 'usdt', '1000');
    must(d, place(alice, 'btc_usdt', BUY, 2_000_000, 100));
    refusedUnchanged(d, { type: 'SetUserStatus', userId: 99, status: 'frozen' }, 'USER_NOT_FOUND');
    refusedUnchanged(d, { type: 'SetUserStatus', userId: alice, status: 'active' }, 'INVALID_STATE');
    refusedUnchanged(
      d,
      { type: 'SetUserStatus', userId: alice, status: 'gone' as 'active' },
      'INVALID_PARAMETER',
    );
    must(d, { type: 'SetUserStatus', userId: alice, status: 'frozen' });
    assert.equal(d.engine.userRecord(alice)?.status, 'frozen');
    refusedUnchanged(d, place(alice, 'btc_usdt', BUY, 2_000_000, 100), 'ACCOUNT_FROZEN');
    refusedUnchanged(
      d,
      {
        type: 'PlaceOrderBatch',
        userId: alice,
        market: 'btc_usdt',
        side: BUY,
        acctType: 0,
        orders: [{ price: 1, amount: 1 }],
      },
      'ACCOUNT_FROZEN',
    );
    assert.throws(() => d.payOut(alice, 'usdt', 'alice-out-1', 10_000_000), /ACCOUNT_FROZEN/);
    assert.equal(d.engine.openOrders(alice).length, 1);
    const cancel = d.apply({
      type: 'CancelOrder',
      userId: alice,
      market: 'btc_usdt',
      orderId: 1,
      clientOrderId: '',
    });
    assert.equal(cancel.result, 'OK');
    must(d, { type: 'SetUserStatus', userId: alice, status: 'active' });
    must(d, place(alice, 'btc_usdt', BUY, 2_000_000, 100));
  });

  test("the operator cancels a user's orders, in one market or all", () => {
    const d = new EngineDriver();
    const alice = d.fund('alice', 'usdt', '10000');
    must(d, place(alice, 'btc_usdt', BUY, 2_000_000, 100));
    must(d, place(alice, 'eth_usdt', BUY, 200_000, 1_000));
    must(d, place(alice, 'eth_usdt', BUY, 190_000, 1_000));
    refusedUnchanged(d, { type: 'CancelUserOrders', userId: 42, market: '' }, 'USER_NOT_FOUND');
    refusedUnchanged(d, { type: 'CancelUserOrders', userId: alice, market: 'nope_usdt' }, 'UNKNOWN_MARKET');
    must(d, { type: 'CancelUserOrders', userId: alice, market: 'eth_usdt' });
    assert.deepEqual(
      d.engine.openOrders(alice).map((o) => o.market),
      ['btc_usdt'],
    );
    const r = d.apply({ type: 'CancelUserOrders', userId: alice, market: '' });
    const updated = r.events.find((e) => e.type === 'OrderUpdated');
    assert.ok(updated?.type === 'OrderUpdated' && updated.cancelReason === 'operator');
    assert.deepEqual(d.engine.openOrders(alice), []);
    assert.deepEqual(d.engine.balance(alice, 'usdt'), { available: 10000_000000, frozen: 0 });
  });

  test("a user's own withdrawal limit replaces the coin's, and clears", () => {
    const d = new EngineDriver();
    const alice = d.fund('alice', 'usdt', '1000');
    refusedUnchanged(d, { type: 'SetWithdrawLimit', userId: 77, coin: 'usdt', limit: 1 }, 'USER_NOT_FOUND');
    refusedUnchanged(d, { type: 'SetWithdrawLimit', userId: alice, coin: 'nope', limit: 1 }, 'UNKNOWN_COIN');
    refusedUnchanged(
      d,
      { type: 'SetWithdrawLimit', userId: alice, coin: 'usdt', limit: -1 },
      'INVALID_PARAMETER',
    );
    must(d, { type: 'SetWithdrawLimit', userId: alice, coin: 'usdt', limit: 50_000_000 });
    assert.equal(d.engine.funds.userWithdrawLimit(alice, 'usdt'), 50_000_000);
    d.payOut(alice, 'usdt', 'alice-out-1', 40_000_000);
    assert.throws(
      () => d.payOut(alice, 'usdt', 'alice-out-1', 20_000_000),
      /the operator set for this account is 50 usdt/,
    );
    must(d, { type: 'SetWithdrawLimit', userId: alice, coin: 'usdt', limit: null });
    d.payOut(alice, 'usdt', 'alice-out-1', 20_000_000);
  });

  test('a key rotates: new secret, same owner, permissions and IPs', () => {
    const d = new EngineDriver();
    const alice = d.user('alice');
    must(d, {
      type: 'CreateApiKey',
      userId: alice,
      accessKey: 'alice-key-1',
      sealedSecret: 'old',
      permissions: { asset: true, entrust: false, money: true, lever: false },
      ips: ['10.0.0.1'],
      replayProtection: true,
    });
    const before = d.engine.apiKey('alice-key-1');
    refusedUnchanged(
      d,
      { type: 'RotateApiKey', accessKey: 'nobody-key', sealedSecret: 'x' },
      'UNKNOWN_REFERENCE',
    );
    refusedUnchanged(
      d,
      { type: 'RotateApiKey', accessKey: 'alice-key-1', sealedSecret: '' },
      'INVALID_PARAMETER',
    );
    must(d, { type: 'RotateApiKey', accessKey: 'alice-key-1', sealedSecret: 'new' });
    assert.deepEqual(d.engine.apiKey('alice-key-1'), { ...before, sealedSecret: 'new' });
  });

  test('users keep their registration time; a replay and a snapshot reproduce every change exactly', () => {
    const d = new EngineDriver();
    session(d);
    const alice = d.engine.userId('alice') as number;
    assert.ok((d.engine.userRecord(alice)?.created ?? 0) > 0);
    // Replay: the same commands from the genesis give the same state hash.
    const replay = new EngineDriver();
    session(replay);
    assert.equal(replay.engine.stateHash(), d.engine.stateHash());
    // A snapshot restores it exactly (coins, markets, chains, statuses, limits, keys).
    const restored = Engine.restore(JSON.parse(JSON.stringify(d.engine.snapshot())));
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.market('sol_usdt')?.status, 'closed');
    assert.deepEqual(restored.funds.coinFunds('sol'), SOL_FUNDS);
    assert.equal(restored.funds.userWithdrawLimit(alice, 'usdt'), 5_000_000);
    assert.equal(restored.userRecord(alice)?.created, d.engine.userRecord(alice)?.created);
  });
});
