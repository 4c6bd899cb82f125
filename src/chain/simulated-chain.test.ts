import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULT_FUNDS } from '../config/default-venue.ts';
import { ChainError, SIMULATED_CHAIN_FILE, SimulatedChain } from './simulated-chain.ts';

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-sim-'));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const throwsChain = (run: () => unknown, result: string, message: RegExp): void =>
  assert.throws(
    run,
    (e: unknown) => e instanceof ChainError && e.result === result && message.test(e.message),
  );

describe('simulated chain', () => {
  test('deposit addresses: derived per coin, chain and user, in each network’s form; memo chains share an account', async () => {
    const sim = SimulatedChain.open(DEFAULT_FUNDS);
    const erc20 = sim.adapter('usdt', 'ERC20');
    const a = await erc20.depositAddress(1);
    assert.match(a.address, /^0x[0-9a-f]{40}$/);
    assert.deepEqual(await erc20.depositAddress(1), a, 'the same user gets the same address');
    assert.notEqual((await erc20.depositAddress(2)).address, a.address);
    assert.match(
      (await sim.adapter('usdt', 'TRC20').depositAddress(1)).address,
      /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
    );
    assert.match((await sim.adapter('btc', 'BTC').depositAddress(1)).address, /^bc1q[02-9ac-hj-np-z]{38}$/);
    assert.deepEqual(await sim.adapter('xwc', 'XWC').depositAddress(7), {
      address: 'bourse.xwc',
      memo: '100007',
    });
    assert.ok(sim.isMemoAccount('bourse.xwc'));
    assert.throws(() => sim.adapter('usdt', 'OMNI'), /no usdt on OMNI/);
  });

  test('withdrawal destinations: each chain accepts its own address form', () => {
    const sim = SimulatedChain.open(DEFAULT_FUNDS);
    const cases: [string, string, string, boolean][] = [
      ['usdt', 'ERC20', `0x${'ab'.repeat(20)}`, true],
      ['usdt', 'ERC20', `T${'1'.repeat(33)}`, false],
      ['usdt', 'TRC20', `T${'1'.repeat(33)}`, true],
      ['usdt', 'TRC20', 'T0OIl'.padEnd(34, '1'), false],
      ['btc', 'BTC', 'bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh', true],
      ['btc', 'BTC', '1BoatSLRHtKNngkdXEeobR76b53LETtpyT', true],
      ['btc', 'BTC', 'not an address', false],
      ['bch', 'BCH', 'qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy', true],
      ['xwc', 'XWC', 'alice.acct_12345', true],
      ['xwc', 'XWC', 'alice.acct', false],
      ['xwc', 'XWC', 'alice.acct_', false],
    ];
    for (const [coin, chain, text, ok] of cases)
      assert.equal(sim.adapter(coin, chain).isAddress(text), ok, `${chain} ${text}`);
  });

  test('deposits pay watched addresses only; confirmations count blocks; a final one cannot fail', async () => {
    const sim = SimulatedChain.open(DEFAULT_FUNDS);
    const btc = sim.adapter('btc', 'BTC');
    const to = await btc.depositAddress(1);
    throwsChain(
      () => sim.deposit('btc', 'BTC', 'bc1qnotours', '', 5),
      'INVALID_PARAMETER',
      /not a deposit address/,
    );
    throwsChain(() => sim.deposit('btc', 'BTC', to.address, '', 0), 'INVALID_AMOUNT', /positive/);
    throwsChain(
      () => sim.deposit('btc', 'OMNI', to.address, '', 5),
      'INVALID_PARAMETER',
      /carries no btc on OMNI/,
    );
    const tx = sim.deposit('btc', 'BTC', to.address, '', 5_000);
    assert.deepEqual(await btc.deposits(), [
      {
        txHash: tx.hash,
        output: 0,
        address: to.address,
        memo: '',
        amount: 5_000,
        confirmations: 0,
        failed: false,
      },
    ]);
    assert.equal(sim.mine(3), 3);
    assert.equal((await btc.deposits())[0]?.confirmations, 3);
    throwsChain(() => sim.fail(tx.hash), 'INVALID_STATE', /final \(3 of 2 confirmations\)/);
    throwsChain(() => sim.fail('nope'), 'UNKNOWN_REFERENCE', /no transaction/);
    throwsChain(() => sim.mine(0), 'INVALID_PARAMETER', /1 to 10000/);
    const late = sim.deposit('btc', 'BTC', to.address, '', 7);
    sim.fail(late.hash);
    throwsChain(() => sim.fail(late.hash), 'INVALID_STATE', /failed already/);
    sim.mine(1);
    assert.equal((await btc.deposits())[1]?.confirmations, 0, 'a failed transaction never enters a block');
    assert.equal(sim.holdings('btc'), 5_000n);
  });

  test('a withdrawal is sent once per id; the wallet pays it out; one to a venue address is also a deposit', async () => {
    const sim = SimulatedChain.open(DEFAULT_FUNDS);
    const usdt = sim.adapter('usdt', 'TRC20');
    const bob = await usdt.depositAddress(2);
    sim.deposit('usdt', 'TRC20', bob.address, '', 1_000);
    sim.mine(20);
    const order = { withdrawalId: '7', address: `T${'1'.repeat(33)}`, memo: '', amount: 300 };
    const hash = await usdt.send(order);
    assert.equal(await usdt.send(order), hash, 'sent again after a crash: the same transaction');
    assert.deepEqual(await usdt.transfer(hash), { txHash: hash, confirmations: 0, failed: false });
    assert.equal(await sim.adapter('usdt', 'ERC20').transfer(hash), undefined);
    assert.equal(sim.holdings('usdt'), 700n);
    await usdt.send({ withdrawalId: '8', address: bob.address, memo: '', amount: 200 });
    sim.mine(20);
    assert.equal((await usdt.deposits()).length, 2, 'the payment to bob’s address is a deposit too');
    assert.equal(sim.holdings('usdt'), 700n);
  });

  test('the log survives a restart, a torn last line is dropped, and news is announced', async () => {
    const dir = tempDir();
    const sim = SimulatedChain.open(DEFAULT_FUNDS, dir);
    let announced = 0;
    sim.onChange(() => announced++);
    const to = await sim.adapter('eth', 'ETH').depositAddress(3);
    const tx = sim.deposit('eth', 'ETH', to.address, '', 42);
    sim.mine(2);
    const sent = await sim
      .adapter('eth', 'ETH')
      .send({ withdrawalId: '1', address: `0x${'cd'.repeat(20)}`, memo: '', amount: 5 });
    sim.fail(sent);
    assert.equal(announced, 5);
    appendFileSync(join(dir, SIMULATED_CHAIN_FILE), '{"op":"mine","blo');
    const logged: string[] = [];
    const again = SimulatedChain.open(DEFAULT_FUNDS, dir, (m) => logged.push(m));
    assert.match(logged.join(), /torn last record/);
    assert.equal(again.height, 2);
    assert.equal(again.transaction(tx.hash)?.block, 1);
    assert.equal(again.transaction(sent)?.failed, true);
    assert.deepEqual(
      await again.adapter('eth', 'ETH').deposits(),
      await sim.adapter('eth', 'ETH').deposits(),
    );
    assert.equal(again.holdings('eth'), sim.holdings('eth'));
    again.mine(1);
    const lines = readFileSync(join(dir, SIMULATED_CHAIN_FILE), 'utf8').split('\n');
    assert.deepEqual(lines.slice(-2), ['{"op":"mine","blocks":1}', ''], 'the torn record was cut off');
    assert.equal(SimulatedChain.open(DEFAULT_FUNDS, dir).height, 3);
  });
});
