/**
 * End to end, the risk side (issue 15): the real server; ccxt 2.9.16's unchanged `zb` adapter
 * opens a long isolated position and reads its risk fields; a gap through its line liquidates it in
 * the step of the price move; ccxt reads the account after it and the liquidation's bills; the
 * operator reads the record and the insurance fund with `bourse liquidations` / `bourse insurance`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bourseJson, runBourseJson } from '../fixtures/cli.ts';
import { connect, type Exchange } from '../fixtures/ccxt-client.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

const root = mkdtempSync(join(tmpdir(), 'bourse-ccxt-liquidation-'));
const dataDir = join(root, 'data');
let server: ServerProcess;
let alice: Exchange;
let bob: Exchange;
let carol: Exchange;

const bourse = (...args: string[]): ReturnType<typeof runBourseJson> =>
  runBourseJson([...args, '--data', dataDir]);
const must = (...args: string[]): Promise<Record<string, any>> => bourseJson([...args, '--data', dataDir]);

before(async () => {
  server = await startServer(dataDir);
  const keys: Record<string, any> = {};
  for (const name of ['alice', 'bob', 'carol']) {
    await must('user', 'create', name);
    keys[name] = await must('key', 'create', name, '--perms', 'asset,entrust,lever');
  }
  alice = connect(server.base, keys.alice.accessKey, keys.alice.secretKey);
  bob = connect(server.base, keys.bob.accessKey, keys.bob.secretKey);
  carol = connect(server.base, keys.carol.accessKey, keys.carol.secretKey);
  await must('deposit', 'credit', 'alice', 'usdt', '1000');
  await must('deposit', 'credit', 'bob', 'btc', '5');
  await must('deposit', 'credit', 'bob', 'usdt', '300000');
  await must('deposit', 'credit', 'carol', 'btc', '10');
  await must('lending', 'fund', 'usdt', '100000', '--rate', '0.05', '--days', '10');
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const lever = async (): Promise<any> =>
  (await alice.spotV1PrivateGetGetLeverAssetsInfo()).message.datas.levers.find(
    (l: any) => l.key === 'btcusdt',
  );

describe('ccxt zb and bourse: a forced liquidation', () => {
  test('risk fields before, the liquidation in the step of the trade that crossed the line, the account, bills and operator views after', async () => {
    await alice.transfer('USDT', 1000, 'spot', 'isolated', { symbol: 'BTC/USDT' });
    await alice.borrowMargin('USDT', 3000, 'BTC/USDT', { marginMode: 'isolated' });
    await bob.createOrder('BTC/USDT', 'limit', 'sell', 0.13, 30000);
    await alice.createOrder('BTC/USDT', 'limit', 'buy', 0.13, 30000, { marginMode: 'isolated' });
    let l = await lever();
    // (100 + 0.12974 × 30,000) ÷ 3,000.0625 at the mark (the first trade); the line's tick.
    // ccxt quotes JSON numbers (quoteJsonNumbers): `level` is compared as a number.
    assert.deepEqual(
      [l.riskRate, l.unwindPrice, Number(l.level), l.repayLock],
      ['1.3307', '24202.77', 1, false],
    );

    // A fall: bob bids 0.2 at 23,400; then carol sells bob 0.4 btc (more than the mark's window of
    // 10,000 usdt at 30,000) at a time, each 1 % under the last. The mark (issue 29: the newest
    // 10,000 usdt of trades, value-weighted, a trade counting at most 1 % from it) follows trade
    // by trade; after the 22nd, at 24,057.91, it is 24,071.42 (the window still holds a little of
    // the 21st): through alice's line (24,202.77). Her 0.1297 btc go to bob's 23,400 bid, inside
    // the band (⌈24,071.42 × 0.97⌉ = 23,349.28).
    await bob.createOrder('BTC/USDT', 'limit', 'buy', 0.2, 23400);
    for (let k = 1; k <= 22; k++) {
      const price = Math.round(30000 * 0.99 ** k * 100) / 100;
      await bob.createOrder('BTC/USDT', 'limit', 'buy', 0.4, price);
      await carol.createOrder('BTC/USDT', 'limit', 'sell', 0.4, price);
    }

    // Liquidated in that step: her 0.1297 btc sold at 23,400, 3,000.0625 repaid, 1 % fee.
    l = await lever();
    assert.deepEqual(
      [l.riskRate, Number(l.level), l.repayLock, l.fLoanIn, l.fAvailable],
      ['-', 1, false, '0.000000', '104.916875'],
    );
    const isolated = await alice.fetchBalance({ marginMode: 'isolated' });
    assert.equal(isolated.USDT.free, 104.916875);
    const records = await alice.spotV1PrivateGetGetLoanRecords({ marketName: 'btcusdt' });
    assert.equal(Number(records.result[0].status), 4);

    const bills = (await alice.spotV1PrivateGetGetLeverBills({ marketName: 'btcusdt', pageSize: 50 })).result;
    const fee = bills.find((b: any) => b.typeDesc === 'liquidation fee');
    assert.equal(fee.remark, 'liquidation 1');
    assert.equal(fee.changeAmount, '-30.000625 USDT');
    assert.equal(fee.liquidation.markPrice, '24071.42');
    assert.equal(fee.liquidation.orders[0].filled, '0.12970000');

    const list = await must('liquidations', '--user', 'alice');
    assert.equal(list.total, 1);
    const [record] = list.liquidations;
    assert.deepEqual([record.user, record.status, record.riskRate], ['alice', 'done', '1.0743']);
    const shown = await must('liquidations', '1');
    assert.deepEqual(shown.liquidation, record);
    const fund = await must('insurance', 'usdt');
    assert.deepEqual(
      [fund.coins[0].available, fund.coins[0].liquidationFees, fund.coins[0].interestShare],
      ['30.006875', '30.000625', '0.00625'],
    );

    // Refusals reach the operator as such, and change nothing.
    const missing = await bourse('liquidations', '9');
    assert.equal(missing.code, 1);
    assert.match(JSON.stringify(missing.out) + missing.err, /no liquidation 9/);
    const status = await bourse('liquidations', '--status', 'open');
    assert.equal(status.code, 1);
    assert.match(JSON.stringify(status.out) + status.err, /status 'open' must be one of running, done/);
  });
});
