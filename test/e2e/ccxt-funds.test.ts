/**
 * End to end, funds: the real server, the operator's steps through the `bourse` CLI (the same
 * code as the command line), and the trader's through ccxt 2.9.16's unchanged `zb` adapter:
 * deposit addresses, deposits on the simulated chain, the deposit and withdrawal records,
 * withdrawals on chain and internal, and the errors a bot would meet.
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

const root = mkdtempSync(join(tmpdir(), 'bourse-ccxt-funds-'));
const dataDir = join(root, 'data');
const EXTERNAL_TRC20 = `T${'4'.repeat(33)}`;
let server: ServerProcess;
let alice: Exchange;
let bob: Exchange;
const addresses: Record<string, Record<string, unknown>> = {};

/** Calls `read` until `done` holds of its result (at most 5 s): what the chain watcher does is asynchronous. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The answer to the CLI's password prompt. */
let secret = '';

/**
 * Runs `bourse <args> --json` against the server, which the CLI finds from the data directory
 * alone; returns the exit code and the parsed output.
 */
const bourse = (...args: string[]): ReturnType<typeof runBourseJson> =>
  runBourseJson([...args, '--data', dataDir], { readSecret: () => Promise.resolve(secret) });

/** Runs a CLI command that must succeed. */
async function must(...args: string[]): Promise<Record<string, any>> {
  const r = await bourse(...args);
  assert.equal(r.code, 0, `bourse ${args.join(' ')}: ${JSON.stringify(r.out)} ${r.err}`);
  return r.out;
}

before(async () => {
  server = await startServer(dataDir);
  for (const name of ['alice', 'bob']) await must('user', 'create', name);
  const a = await must('key', 'create', 'alice', '--perms', 'asset,entrust,money');
  const b = await must('key', 'create', 'bob', '--perms', 'asset,money');
  alice = connect(server.base, a.accessKey, a.secretKey);
  bob = connect(server.base, b.accessKey, b.secretKey);
  addresses.aliceErc20 = await must('address', 'create', 'alice', 'usdt');
  addresses.aliceTrc20 = await must('address', 'create', 'alice', 'USDT', '--chain', 'trc20');
  addresses.aliceXwc = await must('address', 'create', 'alice', 'xwc');
  addresses.bobTrc20 = await must('address', 'create', 'bob', 'usdt', '--chain', 'TRC20');
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('ccxt zb adapter: funds against Bourse', () => {
  test('loadMarkets builds the currencies from getFeeInfo: every coin, with its chains’ fees', async () => {
    await alice.loadMarkets();
    assert.deepEqual(alice.currencies.USDT.fees, { ERC20: 15, TRC20: 1 });
    assert.deepEqual(alice.currencies.XWC.fees, { XWC: 0.01 });
    assert.ok(['BTC', 'ETH', 'QC', 'ZB', 'BCH', 'BSV', 'HC'].every((c) => alice.currencies[c] !== undefined));
  });

  test('fetchDepositAddress: the coin’s first chain; on a memo chain the account and the memo as tag', async () => {
    const usdt = await alice.fetchDepositAddress('USDT');
    assert.deepEqual(
      [usdt.currency, usdt.address, usdt.tag],
      ['USDT', addresses.aliceErc20?.address, undefined],
    );
    const xwc = await alice.fetchDepositAddress('XWC');
    assert.deepEqual([xwc.address, xwc.tag], ['bourse.xwc', '100001']);
    await assert.rejects(alice.fetchDepositAddress('BTC'), (e: Error) => {
      assert.ok(e instanceof ccxtErrors.ExchangeError);
      assert.match(e.message, /no btc deposit address yet: it must first be created/);
      return true;
    });
  });

  test('fetchDepositAddresses: Bourse answers every chain; ccxt 2.9.16 itself throws before it reads the answer', async () => {
    // ccxt 2.9.16's base parseDepositAddresses starts from `let result = undefined` and pushes to
    // it, so the unified method throws a TypeError for any answer. The adapter's own request
    // works unchanged, and its per-entry parser reads the entries with an address; it reads no
    // `account`, so it cannot read a memo entry as the interface (and ccxt's own sample) shows it.
    await assert.rejects(alice.fetchDepositAddresses(), TypeError);
    const response = await alice.spotV1PrivateGetGetPayinAddress();
    const entries = response.message.datas;
    assert.deepEqual(entries[2], {
      blockChain: 'xwc',
      isUseMemo: true,
      account: 'bourse.xwc',
      memo: '100001',
      canDeposit: true,
      canWithdraw: true,
      currency: 'XWC',
    });
    const parsed = entries.slice(0, 2).map((entry: any) => alice.parseDepositAddress(entry));
    assert.deepEqual(
      parsed.map((a: any) => [a.currency, a.address, a.tag]),
      [
        ['ERC20', addresses.aliceErc20?.address, undefined],
        ['TRC20', addresses.aliceTrc20?.address, undefined],
      ],
    );
  });

  test('fetchDeposits: a deposit on the simulated chain, pending until its confirmations, then ok', async () => {
    const paid = await must('chain', 'deposit', addresses.aliceTrc20?.address as string, '1000');
    assert.match(paid.hash, /^[0-9a-f]{64}$/);
    await must('chain', 'mine', '5');
    const [pending] = await alice.fetchDeposits('USDT');
    assert.deepEqual(
      [
        pending.type,
        pending.status,
        pending.amount,
        pending.txid,
        pending.address,
        Number(pending.info.confirmTimes),
      ],
      ['deposit', 'pending', 1000, paid.hash, addresses.aliceTrc20?.address, 5],
    );
    await must('chain', 'mine', '15');
    const [done] = await alice.fetchDeposits('USDT');
    assert.equal(done.status, 'ok');
    assert.equal(typeof done.timestamp, 'number');
    const balance = await alice.fetchBalance();
    assert.equal(balance.USDT.free, 1000);
  });

  test('withdraw: a verified address, the chain’s fee and the fund password; fetchWithdrawals follows it on chain', async () => {
    alice.password = 'fund-pass-1';
    secret = 'fund-pass-1';
    await must('fund-password', 'set', 'alice');
    await assert.rejects(alice.withdraw('USDT', 100, EXTERNAL_TRC20, undefined, { fees: 1 }), (e: Error) => {
      assert.ok(e instanceof ccxtErrors.InvalidAddress, `${e.constructor.name}: ${e.message}`);
      return true;
    });
    await must('withdraw-address', 'add', 'alice', 'usdt', EXTERNAL_TRC20);
    await must('withdraw-address', 'verify', 'alice', 'usdt', EXTERNAL_TRC20);
    await assert.rejects(
      alice.withdraw('USDT', 100, EXTERNAL_TRC20, undefined, { fees: 15 }),
      (e: Error) => e instanceof ccxtErrors.BadRequest && /fees must be 1 usdt/.test(e.message),
    );
    await assert.rejects(
      alice.withdraw('USDT', 100, EXTERNAL_TRC20, undefined, { fees: 1, safePwd: 'not-it' }),
      (e: Error) => e instanceof ccxtErrors.AuthenticationError && /fund password wrong/.test(e.message),
    );
    const w = await alice.withdraw('USDT', 100, EXTERNAL_TRC20, undefined, { fees: 1 });
    assert.deepEqual([w.type, w.id, w.amount, w.address], ['withdrawal', '1', 100, EXTERNAL_TRC20]);
    // Under the auto-approve limit: the chain watcher sends it right away.
    const [sent] = await eventually(
      () => alice.fetchWithdrawals('USDT'),
      (list: any[]) => list[0]?.txid !== '' && list[0]?.txid !== undefined,
    );
    assert.deepEqual(
      [sent.type, sent.id, sent.status, sent.amount, sent.fee.cost, sent.address],
      ['withdrawal', '1', 'pending', 100, 1, EXTERNAL_TRC20],
    );
    assert.match(sent.txid, /^[0-9a-f]{64}$/);
    await must('chain', 'mine', '1');
    assert.equal(
      (await alice.fetchWithdrawals('USDT'))[0].status,
      'ok',
      'confirmed (5) counts as ok for ccxt',
    );
    await must('chain', 'mine', '19');
    const [done] = await alice.fetchWithdrawals('USDT');
    assert.deepEqual([done.status, Number(done.info.status)], ['ok', 2]);
    const balance = await alice.fetchBalance();
    assert.deepEqual([balance.USDT.free, balance.USDT.used], [899, 0]);
  });

  test('withdraw with itransfer to another user: internal at once, on both sides', async () => {
    const bobs = addresses.bobTrc20?.address as string;
    await must('withdraw-address', 'add', 'alice', 'usdt', bobs);
    await must('withdraw-address', 'verify', 'alice', 'usdt', bobs);
    const w = await alice.withdraw('USDT', 50, bobs, undefined, { fees: 0, itransfer: 1 });
    const [mine] = await alice.fetchWithdrawals('USDT', undefined, 1);
    assert.deepEqual([mine.id, mine.status, mine.fee.cost, Number(mine.info.itransfer)], [w.id, 'ok', 0, 1]);
    const [theirs] = await bob.fetchDeposits('USDT');
    assert.deepEqual([theirs.status, theirs.amount, Number(theirs.info.itransfer)], ['ok', 50, 1]);
    assert.equal((await bob.fetchBalance()).USDT.free, 50);
  });

  test('the operator’s view, and bad CLI input refused with the code and a clear message', async () => {
    const listed = await must('withdraw', 'list');
    assert.deepEqual(
      listed.withdrawals.map((w: any) => [w.id, w.user, w.state, w.itransfer]),
      [
        ['1', 'alice', 'succeeded', false],
        ['2', 'alice', 'succeeded', true],
      ],
    );
    assert.deepEqual((await must('withdraw', 'list', '--pending')).withdrawals, []);
    const steps = (await must('withdraw', 'show', '1')).steps.map((s: any) => s.status);
    assert.deepEqual(steps, ['approved', 'sending', 'sent', 'confirmed', 'succeeded']);
    for (const [args, code, message] of [
      [['address', 'create', 'nobody', 'usdt'], 3004, /no user named 'nobody'/],
      [['address', 'create', 'alice', 'usdt', '--chain', 'omni'], 3005, /no chain 'OMNI'/],
      [['chain', 'mine', '0'], 3005, /1 to 10000/],
      [['chain', 'deposit', 'bourse.xwc', '1'], 3005, /give the memo too/],
      [['chain', 'deposit', addresses.aliceErc20?.address as string, '1.0000001'], 3003, /6 decimals/],
      [['withdraw', 'approve', '1'], 3005, /is succeeded: it cannot be approved/],
      [['withdraw', 'reject', '77'], 3005, /no withdrawal '77'/],
      [['withdraw-address', 'add', 'bob', 'usdt', 'nowhere'], 3005, /not a usdt address/],
    ] as const) {
      const r = await bourse(...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.out.code, code, `${args.join(' ')}: ${JSON.stringify(r.out)}`);
      assert.match(r.out.message, message);
    }
    secret = 'abc';
    const short = await bourse('fund-password', 'set', 'bob');
    assert.equal(short.code, 1);
    assert.equal(short.out.code, 3005);
    assert.match(short.out.message, /6 to 64/);
  });
});
