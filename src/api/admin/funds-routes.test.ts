import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChainWatcher } from '../../chain/chain-watcher.ts';
import { SimulatedChain } from '../../chain/simulated-chain.ts';
import { DEFAULT_FUNDS } from '../../config/default-venue.ts';
import { verifyFundPassword } from '../auth/fund-password.ts';
import { TestVenue } from '../../../test/fixtures/signed-venue.ts';
import type { ApiRequest, Route } from '../http/types.ts';
import { answering } from './admin-reply.ts';
import { fundsAdminRoutes } from './funds-routes.ts';

type Json = Record<string, unknown>;

/** A venue with the simulated chain, its watcher, and alice and bob registered. */
async function setUp(withChain = true): Promise<{
  venue: TestVenue;
  sim: SimulatedChain;
  watcher: ChainWatcher;
  call: (path: string, form: Record<string, string>) => Promise<Json>;
}> {
  const venue = new TestVenue();
  const sim = SimulatedChain.open(DEFAULT_FUNDS);
  const watcher = new ChainWatcher({
    engine: venue.engine,
    submit: (command) => venue.submit(command),
    adapters: sim.adapters(),
    log: () => {},
  });
  await watcher.start();
  const routes = new Map<string, Route>(
    fundsAdminRoutes({
      venue,
      chains: () => sim.adapters(),
      simulator: withChain ? sim : undefined,
      syncChains: () => watcher.sync(),
    }).map((r) => [r.path, r]),
  );
  await venue.user('alice');
  await venue.user('bob');
  const call = async (path: string, form: Record<string, string>): Promise<Json> => {
    const request: ApiRequest = {
      method: 'POST',
      path,
      params: Object.entries(form).map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: {},
      receivedAt: 0,
    };
    const reply = await answering((routes.get(path) as Route).handler)(request);
    return 'json' in reply ? (reply.json as Json) : {};
  };
  return { venue, sim, watcher, call };
}

describe('operator funds routes', () => {
  test('deposit on the simulated chain, mine, and the user is credited at the chain’s confirmations', async () => {
    const { venue, call } = await setUp();
    const address = await call('/admin/addresses/create', { user: 'alice', coin: 'USDT', chain: 'trc20' });
    assert.equal(address.code, 1000);
    assert.deepEqual([address.coin, address.chain, address.memo], ['usdt', 'TRC20', '']);
    assert.deepEqual(
      await call('/admin/addresses/create', { user: 'alice', coin: 'usdt', chain: 'TRC20' }),
      address,
    );
    const erc20 = await call('/admin/addresses/create', { user: 'alice', coin: 'usdt' });
    assert.equal(erc20.chain, 'ERC20', 'the coin’s first chain unless named');
    const memo = await call('/admin/addresses/create', { user: 'bob', coin: 'xwc' });
    assert.deepEqual([memo.address, memo.memo, memo.key], ['bourse.xwc', '100002', 'bourse.xwc_100002']);

    const paid = await call('/admin/chain/deposit', { address: address.address as string, amount: '250.5' });
    assert.equal(paid.code, 1000);
    assert.match(paid.hash as string, /^[0-9a-f]{64}$/);
    assert.deepEqual([paid.coin, paid.chain, paid.required], ['usdt', 'TRC20', 20]);
    const deposit = `chain:usdt/TRC20/${paid.hash as string}/0`;
    assert.equal(venue.engine.funds.deposit(deposit)?.state, 'confirming');
    assert.equal((await call('/admin/chain/mine', { blocks: '19' })).height, 19);
    assert.equal(venue.engine.funds.deposit(deposit)?.confirmations, 19);
    assert.deepEqual(venue.engine.balance(1, 'usdt'), { available: 0, frozen: 0 });
    await call('/admin/chain/mine', {});
    assert.deepEqual(venue.engine.balance(1, 'usdt'), { available: 250_500_000, frozen: 0 });

    assert.equal(
      (await call('/admin/chain/deposit', { address: 'bourse.xwc_100002', amount: '3' })).code,
      1000,
    );
    const failing = await call('/admin/chain/deposit', {
      address: 'bourse.xwc',
      memo: '100002',
      amount: '4',
    });
    assert.equal((await call('/admin/chain/fail', { hash: failing.hash as string })).code, 1000);
    await call('/admin/chain/mine', { blocks: '3' });
    assert.deepEqual(venue.engine.balance(2, 'xwc'), { available: 300_000_000, frozen: 0 });
    assert.equal(venue.engine.funds.deposit(`chain:xwc/XWC/${failing.hash as string}/0`)?.state, 'failed');
  });

  test('withdrawal book, fund password, and the operator’s approve, reject and list', async () => {
    const { venue, call } = await setUp();
    const to = `T${'1'.repeat(33)}`;
    const added = await call('/admin/withdraw-addresses/add', { user: 'alice', coin: 'usdt', address: to });
    assert.deepEqual([added.code, added.chain, added.verified], [1000, 'TRC20', false]);
    assert.equal(
      (await call('/admin/withdraw-addresses/add', { user: 'alice', coin: 'usdt', address: to })).duplicate,
      true,
    );
    assert.equal(
      (await call('/admin/withdraw-addresses/verify', { user: 'alice', coin: 'usdt', address: to })).verified,
      true,
    );
    assert.equal(
      (await call('/admin/fund-password/set', { user: 'alice', password: 'p@ss w/rd=1' })).code,
      1000,
    );
    const hash = venue.engine.funds.fundPassword(1)?.hash ?? '';
    assert.match(hash, /^scrypt\$16384\$8\$1\$/);
    assert.equal(await verifyFundPassword('p@ss w/rd=1', hash), true);
    assert.equal(await verifyFundPassword('p@ss w/rd=2', hash), false);

    await venue.fund('alice', 'usdt', '40000');
    const request = {
      type: 'RequestWithdrawal',
      userId: 1,
      coin: 'usdt',
      address: to,
      fee: 1_000_000,
      itransfer: false,
    } as const;
    await venue.must({ ...request, amount: 20_000_000_000 }); // 1: waits for approval
    await venue.must({ ...request, amount: 15_000_000_000 }); // 2: waits too
    const pending = (await call('/admin/withdrawals/list', { pending: '1' })).withdrawals as Json[];
    assert.deepEqual(
      pending.map((w) => [w.id, w.user, w.coin, w.chain, w.amount, w.fee, w.state]),
      [
        ['1', 'alice', 'usdt', 'TRC20', '20000', '1', 'submitted'],
        ['2', 'alice', 'usdt', 'TRC20', '15000', '1', 'submitted'],
      ],
    );
    assert.deepEqual(await call('/admin/withdrawals/approve', { id: '1' }), {
      code: 1000,
      message: 'success',
      id: '1',
      state: 'sent',
      duplicate: false,
    });
    assert.equal((await call('/admin/withdrawals/reject', { id: '2' })).state, 'cancelled');
    assert.equal(((await call('/admin/withdrawals/list', {})).withdrawals as Json[]).length, 2);
    // Filtered and paged (issue 31): by user, coin, status and time, newest first when asked.
    const ids = async (form: Record<string, string>): Promise<string[]> =>
      ((await call('/admin/withdrawals/list', form)).withdrawals as Json[]).map((w) => w.id as string);
    assert.deepEqual(await ids({ order: 'newest' }), ['2', '1']);
    assert.deepEqual(await ids({ status: 'cancelled' }), ['2']);
    assert.deepEqual(await ids({ user: 'bob' }), []);
    assert.deepEqual(await ids({ user: 'alice', coin: 'usdt', order: 'newest', limit: '1' }), ['2']);
    assert.deepEqual(await ids({ coin: 'btc' }), []);
    assert.equal((await call('/admin/withdrawals/list', { limit: '1' })).total, 2);
    const badStatus = await call('/admin/withdrawals/list', { status: 'lost' });
    assert.deepEqual(
      [badStatus.code, badStatus.message],
      [
        3005,
        "status 'lost' must be one of submitted, approved, sending, sent, confirmed, succeeded, failed, cancelled",
      ],
    );
    await call('/admin/chain/mine', { blocks: '20' });
    assert.equal(venue.engine.funds.withdrawal('1')?.state, 'succeeded');
    const steps = (await call('/admin/withdrawals/show', { id: '1' })).steps as Json[];
    assert.deepEqual(
      steps.map((x) => x.status),
      ['submitted', 'approved', 'sending', 'sent', 'succeeded'],
    );
  });

  test('bad input gets its code and a clear message, and changes nothing', async () => {
    const { venue, sim, watcher, call } = await setUp();
    const alice = await call('/admin/addresses/create', { user: 'alice', coin: 'btc' });
    const paid = await call('/admin/chain/deposit', { address: alice.address as string, amount: '1' });
    await call('/admin/chain/mine', { blocks: '2' });
    await call('/admin/addresses/create', { user: 'bob', coin: 'xwc' });
    await venue.must({ type: 'SetFundPassword', userId: 1, hash: 'h' });
    await venue.must({
      type: 'AddWithdrawAddress',
      userId: 1,
      coin: 'btc',
      chain: 'BTC',
      address: 'bc1qexternal0000000',
    });
    await venue.must({
      type: 'VerifyWithdrawAddress',
      userId: 1,
      coin: 'btc',
      address: 'bc1qexternal0000000',
    });
    await venue.must({
      type: 'RequestWithdrawal',
      userId: 1,
      coin: 'btc',
      address: 'bc1qexternal0000000',
      amount: 10_000_000,
      fee: 50_000,
      itransfer: false,
    });
    await watcher.sync(); // sends it
    const cases: [string, Record<string, string>, number, RegExp][] = [
      ['/admin/addresses/create', { user: 'nobody', coin: 'btc' }, 3004, /no user named 'nobody'/],
      ['/admin/addresses/create', { user: 'alice', coin: 'doge' }, 3005, /unknown coin 'doge'/],
      ['/admin/addresses/create', { user: 'alice', coin: 'BCHSV' }, 3005, /retired; use 'bsv'/],
      [
        '/admin/addresses/create',
        { user: 'alice', coin: 'usdt', chain: 'omni' },
        3005,
        /no chain 'OMNI': use one of ERC20, TRC20/,
      ],
      ['/admin/addresses/create', { user: 'alice', coin: '' }, 3005, /coin is required/],
      [
        '/admin/withdraw-addresses/add',
        { user: 'alice', coin: 'usdt', address: 'nope' },
        3005,
        /'nope' is not a usdt address on ERC20 or TRC20/,
      ],
      [
        '/admin/withdraw-addresses/add',
        { user: 'alice', coin: 'usdt', address: `0x${'1'.repeat(40)}`, chain: 'trc20' },
        3005,
        /not a usdt address on TRC20/,
      ],
      [
        '/admin/withdraw-addresses/add',
        { user: 'alice', coin: 'xwc', address: 'someone.xwc' },
        3005,
        /not a xwc address on XWC/,
      ],
      [
        '/admin/withdraw-addresses/add',
        { user: 'ghost', coin: 'btc', address: 'bc1qexternal0000000' },
        3004,
        /ghost/,
      ],
      [
        '/admin/withdraw-addresses/verify',
        { user: 'alice', coin: 'btc', address: 'bc1qother' },
        3005,
        /not in the user's btc book/,
      ],
      [
        '/admin/fund-password/set',
        { user: 'alice', password: 'short' },
        3005,
        /6 to 64 printable .*\(5 given\)/,
      ],
      ['/admin/fund-password/set', { user: 'alice', password: 'tab\there' }, 3005, /printable/],
      ['/admin/fund-password/set', { user: 'alice' }, 3005, /6 to 64/],
      ['/admin/withdrawals/list', { pending: 'yes' }, 3005, /pending must be/],
      ['/admin/withdrawals/approve', { id: 'x' }, 3005, /no withdrawal 'x'/],
      ['/admin/withdrawals/approve', { id: '99' }, 3005, /no withdrawal '99'/],
      ['/admin/withdrawals/approve', { id: '1' }, 3005, /withdrawal 1 is sent: it cannot be approved/],
      ['/admin/withdrawals/reject', { id: '1' }, 3005, /is sent: it cannot be cancelled/],
      ['/admin/withdrawals/show', {}, 3005, /no withdrawal ''/],
      [
        '/admin/chain/deposit',
        { address: 'bc1qnotours', amount: '1' },
        3005,
        /not a deposit address of this venue/,
      ],
      ['/admin/chain/deposit', { address: 'bourse.xwc', amount: '1' }, 3005, /give the memo too/],
      [
        '/admin/chain/deposit',
        { address: alice.address as string, amount: '1', chain: 'bch' },
        3005,
        /not a deposit address of this venue on BCH/,
      ],
      [
        '/admin/chain/deposit',
        { address: alice.address as string, amount: '0.123456789' },
        3003,
        /at most 8 decimals/,
      ],
      ['/admin/chain/deposit', { address: alice.address as string, amount: '-2' }, 3003, /positive decimal/],
      ['/admin/chain/deposit', { address: alice.address as string, amount: '0' }, 3003, /positive decimal/],
      ['/admin/chain/deposit', { address: alice.address as string }, 3003, /amount ''/],
      ['/admin/chain/mine', { blocks: '0' }, 3005, /1 to 10000/],
      ['/admin/chain/mine', { blocks: '10001' }, 3005, /1 to 10000/],
      ['/admin/chain/mine', { blocks: 'many' }, 3005, /1 to 10000/],
      ['/admin/chain/fail', { hash: 'feed' }, 3005, /no transaction 'feed'/],
      ['/admin/chain/fail', { hash: paid.hash as string }, 3005, /is final \(2 of 2 confirmations\)/],
    ];
    for (const [path, form, code, message] of cases) {
      const before = JSON.stringify({ ...venue.engine.snapshot(), lastSeq: 0 });
      const height = sim.height;
      const body = await call(path, form);
      assert.equal(body.code, code, `${path} ${JSON.stringify(form)}: ${JSON.stringify(body)}`);
      assert.match(String(body.message), message, `${path} ${JSON.stringify(form)}`);
      assert.equal(
        JSON.stringify({ ...venue.engine.snapshot(), lastSeq: 0 }),
        before,
        `${path} changed the engine`,
      );
      assert.equal(sim.height, height, `${path} changed the chain`);
    }
  });

  test('a coin closed to deposits gets no address, from the engine or the chain', async () => {
    const { venue, sim, call } = await setUp();
    const usdt = venue.engine.coin('usdt');
    assert.ok(usdt);
    await venue.must({ type: 'UpsertCoin', coin: { ...usdt, canDeposit: false } });
    const body = await call('/admin/addresses/create', { user: 'alice', coin: 'usdt' });
    assert.deepEqual(body, { code: 3005, message: 'deposits of usdt on ERC20 are switched off' });
    // The address alice would have got, derived on another chain instance: not watched on this one.
    const would = await SimulatedChain.open(DEFAULT_FUNDS).adapter('usdt', 'ERC20').depositAddress(1);
    assert.deepEqual(sim.watchedAddress(would.address, ''), []);
    assert.deepEqual(venue.engine.funds.depositAddresses(1), []);
  });

  test('without a simulated chain the chain routes say so', async () => {
    const { call } = await setUp(false);
    for (const [path, form] of [
      ['/admin/chain/mine', {}],
      ['/admin/chain/fail', { hash: 'x' }],
      ['/admin/chain/deposit', { address: 'x', amount: '1' }],
    ] as const) {
      const body = await call(path, form);
      assert.deepEqual(body, {
        code: 1001,
        message: 'the chains are real ones: there is no simulated chain to drive',
      });
    }
  });
});
