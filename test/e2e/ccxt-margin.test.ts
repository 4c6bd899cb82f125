/**
 * End to end, margin (issue 14): the real server; the operator funds the lending pool with the
 * `bourse` CLI; the traders use ccxt 2.9.16's unchanged `zb` adapter: fetchBorrowRate(s),
 * transfer spot ↔ isolated and spot ↔ cross, borrowMargin in both modes, fetchBalance with
 * marginMode, createOrder with marginMode — checked on values (what moved, the loan recorded, the
 * order settled in the margin account), and the errors a bot would meet.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runBourseJson } from '../fixtures/cli.ts';
import { ccxtErrors, connect, type Exchange } from '../fixtures/ccxt-client.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

// ccxt's results are untyped: read them as a bot would.
/* eslint-disable @typescript-eslint/no-explicit-any */

const root = mkdtempSync(join(tmpdir(), 'bourse-ccxt-margin-'));
const dataDir = join(root, 'data');
let server: ServerProcess;
let alice: Exchange;
let bob: Exchange;
let spotOnly: Exchange;

const bourse = (...args: string[]): ReturnType<typeof runBourseJson> =>
  runBourseJson([...args, '--data', dataDir]);

async function must(...args: string[]): Promise<Record<string, any>> {
  const r = await bourse(...args);
  assert.equal(r.code, 0, `bourse ${args.join(' ')}: ${JSON.stringify(r.out)} ${r.err}`);
  return r.out;
}

before(async () => {
  server = await startServer(dataDir);
  for (const name of ['alice', 'bob']) await must('user', 'create', name);
  const a = await must('key', 'create', 'alice', '--perms', 'asset,entrust,lever');
  const b = await must('key', 'create', 'bob', '--perms', 'asset,entrust');
  const s = await must('key', 'create', 'alice', '--perms', 'asset,entrust');
  alice = connect(server.base, a.accessKey, a.secretKey);
  bob = connect(server.base, b.accessKey, b.secretKey);
  spotOnly = connect(server.base, s.accessKey, s.secretKey);
  await must('deposit', 'credit', 'alice', 'usdt', '10000');
  await must('deposit', 'credit', 'bob', 'btc', '10');
  const funded = await must(
    'lending',
    'fund',
    'usdt',
    '100000',
    '--rate',
    '0.05',
    '--days',
    '10',
    '--ref',
    'p1',
  );
  assert.equal(funded.fundingId, 'operator:p1');
  const again = await must(
    'lending',
    'fund',
    'usdt',
    '100000',
    '--rate',
    '0.05',
    '--days',
    '10',
    '--ref',
    'p1',
  );
  assert.equal(again.duplicate, true);
  const refused = await bourse('lending', 'fund', 'usdt', '100', '--rate', '0.5', '--days', '10');
  assert.notEqual(refused.code, 0);
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

const free = (b: any, code: string): number => Number(b[code]?.free ?? 0);
const total = (b: any, code: string): number => Number(b[code]?.total ?? 0);

describe('ccxt zb: margin', () => {
  test("fetchBorrowRate and fetchBorrowRates read the pool's offer", async () => {
    const rate = await alice.fetchBorrowRate('USDT');
    assert.equal(rate.currency, 'USDT');
    assert.equal(rate.rate, 0.0005);
    assert.equal(rate.period, 10);
    const rates = await alice.fetchBorrowRates({ coin: 'USDT' });
    assert.equal(rates.length, 1);
    assert.equal(rates[0].info.balance, '100000');
  });

  test('isolated: transfer in, borrow, a margin order settles in the account, transfer out', async () => {
    await alice.transfer('USDT', 1000, 'spot', 'isolated', { symbol: 'BTC/USDT' });
    assert.equal(free(await alice.fetchBalance(), 'USDT'), 9000);
    let isolated = await alice.fetchBalance({ marginMode: 'isolated' });
    assert.equal(total(isolated, 'USDT'), 1000);
    assert.equal(free(isolated, 'USDT'), 1000);

    await alice.borrowMargin('USDT', 2000, 'BTC/USDT', { marginMode: 'isolated' });
    isolated = await alice.fetchBalance({ marginMode: 'isolated' });
    assert.equal(total(isolated, 'USDT'), 3000);
    const records = await alice.spotV1PrivateGetGetLoanRecords({ marketName: 'btcusdt' });
    assert.equal(records.result.length, 1);
    assert.equal(records.result[0].amount, '2000.000000');
    // ccxt quotes JSON numbers (quoteJsonNumbers): compare as numbers.
    assert.equal(Number(records.result[0].status), 1);

    // Beyond the limit: 2009, ccxt's InsufficientFunds; nothing borrowed.
    await assert.rejects(
      alice.borrowMargin('USDT', 100000, 'BTC/USDT', { marginMode: 'isolated' }),
      ccxtErrors.InsufficientFunds,
    );

    await bob.createOrder('BTC/USDT', 'limit', 'sell', 0.05, 30000);
    const order = await alice.createOrder('BTC/USDT', 'limit', 'buy', 0.05, 30000, {
      marginMode: 'isolated',
    });
    const fetched = await alice.fetchOrder(order.id, 'BTC/USDT');
    assert.equal(fetched.status, 'closed');
    assert.equal(Number(fetched.info.acctType), 1);
    // Paid from the isolated account (1,500 USDT); the spot balance did not move.
    assert.equal(free(await alice.fetchBalance(), 'USDT'), 9000);
    assert.equal(total(await alice.fetchBalance(), 'BTC'), 0);
    isolated = await alice.fetchBalance({ marginMode: 'isolated' });
    assert.equal(total(isolated, 'USDT'), 1500);
    const lever = (await alice.spotV1PrivateGetGetLeverAssetsInfo()).message.datas.levers[0];
    assert.equal(lever.key, 'btcusdt');
    // 0.05 BTC less the taker fee (0.2 %, in the coin received) reached the isolated account.
    assert.equal(lever.cAvailable, '0.04990000');

    // Out: what keeps the opening line (couldTransferOutFiat), not more.
    const out = Number(lever.couldTransferOutFiat);
    await assert.rejects(
      alice.transfer('USDT', out + 1, 'isolated', 'spot', { symbol: 'BTC/USDT' }),
      ccxtErrors.InsufficientFunds,
    );
    await alice.transfer('USDT', 100, 'isolated', 'spot', { symbol: 'BTC/USDT' });
    assert.equal(free(await alice.fetchBalance(), 'USDT'), 9100);
  });

  test('cross: transfer in, borrow, fetchBalance, transfer out', async () => {
    await alice.transfer('USDT', 500, 'spot', 'cross');
    await alice.borrowMargin('USDT', 100, undefined, { marginMode: 'cross' });
    const cross = await alice.fetchBalance({ marginMode: 'cross' });
    assert.equal(total(cross, 'USDT'), 600);
    assert.ok(free(cross, 'USDT') > 0 && free(cross, 'USDT') < 600, String(free(cross, 'USDT')));
    const assets = await alice.spotV1PrivateGetGetCrossAssets();
    const usdt = assets.result.list.find((x: any) => x.key === 'USDT');
    assert.equal(Number(usdt.loanIn), 100);
    await alice.transfer('USDT', 50, 'cross', 'spot');
    assert.equal(total(await alice.fetchBalance({ marginMode: 'cross' }), 'USDT'), 550);
  });

  test('a key without leverPerm: margin calls are PermissionDenied; bad marketName is BadRequest', async () => {
    await assert.rejects(spotOnly.fetchBalance({ marginMode: 'isolated' }), ccxtErrors.PermissionDenied);
    await assert.rejects(
      spotOnly.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 1000, { marginMode: 'cross' }),
      ccxtErrors.PermissionDenied,
    );
    await assert.rejects(
      alice.spotV1PrivateGetTransferInLever({ coin: 'usdt', marketName: 'BTC-USDT', amount: '1' }),
      ccxtErrors.BadRequest,
    );
  });
});
