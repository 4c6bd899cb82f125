import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { BUY, SELL, type Command } from '../../domain/commands.ts';
import { Engine, type ApplyResult } from '../../engine/engine.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { adminRoutes } from './admin-routes.ts';
import { MemoryAuditLog } from './audit-log.ts';

const TOKEN = 'b'.repeat(64);
type Json = Record<string, unknown>;

/** Admin routes over a real engine; sealed secrets are `sealed:<accessKey>:<n>`, `lost:` ones do not open. */
function setUp(): {
  engine: Engine;
  audit: MemoryAuditLog;
  must: (command: Command) => void;
  apply: (command: Command) => ApplyResult;
  call: (path: string, form: [string, string][]) => Promise<Json>;
} {
  const engine = new Engine(DEFAULT_VENUE);
  let seq = 0;
  const submit = (command: Command) =>
    Promise.resolve(engine.apply({ ...command, seq: ++seq, time: 1_700_000_000_000 + seq }));
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: () => 1_700_000_000_000,
    submit,
  };
  let n = 0;
  const audit = new MemoryAuditLog();
  const routes = new Map<string, Route>(
    adminRoutes({
      venue,
      token: TOKEN,
      instance: 'i'.repeat(32),
      audit,
      snapshot: () => Promise.resolve('/tmp/snapshot'),
      funds: { chains: () => [], simulator: undefined, syncChains: () => Promise.resolve() },
      keys: {
        issue: () => {
          const accessKey = `key-${String(++n).padStart(8, '0')}`;
          return { accessKey, secretKey: `secret-${n}`, sealedSecret: `sealed:${accessKey}:${n}` };
        },
        renew: (accessKey) => ({ secretKey: `secret-${++n}`, sealedSecret: `sealed:${accessKey}:${n}` }),
        opens: (sealed) => sealed.startsWith('sealed:'),
      },
    }).map((r) => [r.path, r]),
  );
  const call = async (path: string, form: [string, string][]): Promise<Json> => {
    const request: ApiRequest = {
      method: 'POST',
      path,
      params: form.map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: { authorization: `Bearer ${TOKEN}` },
      receivedAt: 0,
    };
    const route = routes.get(path);
    assert.ok(route, `no route ${path}`);
    const reply: ApiReply = await route.handler(request);
    return 'json' in reply ? (reply.json as Json) : {};
  };
  const apply = (command: Command): ApplyResult =>
    engine.apply({ ...command, seq: ++seq, time: 1_700_000_000_000 + seq });
  const must = (command: Command): void => {
    const r = apply(command);
    assert.equal(r.result, 'OK', `${command.type}: ${r.message ?? ''}`);
  };
  return { engine, audit, must, apply, call };
}

/** Calls and checks the refusal: its code, message, and an unchanged state hash. */
async function refused(
  s: ReturnType<typeof setUp>,
  path: string,
  form: [string, string][],
  code: number,
  message: RegExp,
): Promise<void> {
  const before = s.engine.stateHash({ ...s.engine.snapshot(), lastSeq: 0 });
  const b = await s.call(path, form);
  assert.equal(b.code, code, `${path} ${JSON.stringify(form)}: ${String(b.message)}`);
  assert.match(String(b.message), message);
  assert.equal(
    s.engine.stateHash({ ...s.engine.snapshot(), lastSeq: 0 }),
    before,
    `${path} changed the state`,
  );
}

describe('admin change routes (issue 16)', () => {
  test('coin add with a chain, then change of its names, switches, fees and minimums', async () => {
    const s = setUp();
    const added = await s.call('/admin/coins/add', [
      ['coin', 'SOL'],
      ['unitDecimal', '8'],
      ['enName', 'Solana'],
      ['addChain', 'SOL:SOL:32:0.01:0.1'],
      ['dailyWithdrawLimit', '1000'],
      ['autoApproveLimit', '10'],
    ]);
    assert.equal(added.code, 1000, String(added.message));
    assert.equal(added.coin, 'sol');
    assert.deepEqual(added.chains, [
      {
        name: 'SOL',
        mainChain: 'SOL',
        memo: false,
        confirmations: 32,
        withdrawFee: '0.01',
        minWithdraw: '0.1',
        canDeposit: true,
        canWithdraw: true,
      },
    ]);
    assert.equal(s.engine.coin('sol')?.fundsType, 61, 'after the highest fundsType (xwc 60)');
    assert.equal(s.engine.funds.coinFunds('sol')?.dailyWithdrawLimit, 1000_00000000);

    const changed = await s.call('/admin/coins/change', [
      ['coin', 'sol'],
      ['chain', 'sol'],
      ['withdrawFee', '0.02'],
      ['minWithdraw', '0.5'],
      ['confirmations', '40'],
      ['chainDeposit', 'off'],
    ]);
    assert.equal(changed.code, 1000, String(changed.message));
    const chain = s.engine.funds.chain('sol', 'SOL');
    assert.deepEqual(
      [chain?.withdrawFee, chain?.minWithdraw, chain?.confirmations, chain?.canDeposit],
      [2_000_000, 50_000_000, 40, false],
    );
    const off = await s.call('/admin/coins/change', [
      ['coin', 'sol'],
      ['canWithdraw', 'false'],
      ['addChain', 'SPL:SOL:1:0:0.1:memo'],
    ]);
    assert.equal(off.code, 1000, String(off.message));
    assert.equal(s.engine.coin('sol')?.canWithdraw, false);
    assert.deepEqual(
      s.engine.funds.coinFunds('sol')?.chains.map((c) => [c.name, c.memo]),
      [
        ['SOL', false],
        ['SPL', true],
      ],
    );
  });

  test('bad coins are refused, clearly, and change nothing', async () => {
    const s = setUp();
    await refused(
      s,
      '/admin/coins/add',
      [
        ['coin', 'btc'],
        ['unitDecimal', '8'],
      ],
      3005,
      /coin btc exists/,
    );
    await refused(s, '/admin/coins/add', [['coin', 'sol']], 3005, /unitDecimal is required/);
    await refused(
      s,
      '/admin/coins/add',
      [
        ['coin', 'sol'],
        ['unitDecimal', '99'],
      ],
      3005,
      /0 to 15/,
    );
    await refused(
      s,
      '/admin/coins/add',
      [
        ['coin', 'bchabc'],
        ['unitDecimal', '8'],
      ],
      3005,
      /retired/,
    );
    await refused(
      s,
      '/admin/coins/add',
      [
        ['coin', 'sol'],
        ['unitDecimal', '8'],
        ['addChain', 'SOL:SOL:32:0.01'],
      ],
      3005,
      /NAME:MAINCHAIN/,
    );
    await refused(
      s,
      '/admin/coins/add',
      [
        ['coin', 'sol'],
        ['unitDecimal', '8'],
        ['addChain', 'SOL:SOL:32:0.01:0.1'],
      ],
      3005,
      /dailyWithdrawLimit is required/,
    );
    await refused(
      s,
      '/admin/coins/change',
      [
        ['coin', 'nope'],
        ['enName', 'x'],
      ],
      3005,
      /unknown coin 'nope'/,
    );
    await refused(s, '/admin/coins/change', [['coin', 'btc']], 3005, /nothing to change/);
    await refused(
      s,
      '/admin/coins/change',
      [
        ['coin', 'btc'],
        ['chain', 'ERC20'],
        ['withdrawFee', '1'],
      ],
      3005,
      /no chain 'ERC20'/,
    );
    await refused(
      s,
      '/admin/coins/change',
      [
        ['coin', 'btc'],
        ['withdrawFee', '1'],
      ],
      3005,
      /name it with chain/,
    );
    await refused(
      s,
      '/admin/coins/change',
      [
        ['coin', 'btc'],
        ['chain', 'BTC'],
        ['withdrawFee', '0.000000001'],
      ],
      3003,
      /at most 8 decimals/,
    );
    await refused(
      s,
      '/admin/coins/change',
      [
        ['coin', 'btc'],
        ['canDeposit', 'maybe'],
      ],
      3005,
      /on or off/,
    );
  });

  test('market add (with a maker rebate), change, close; bad ones refused', async () => {
    const s = setUp();
    const form: [string, string][] = [
      ['market', 'eth_qc'],
      ['priceScale', '2'],
      ['amountScale', '3'],
      ['minAmount', '0.001'],
      ['minSize', '1'],
      ['makerFee', '-0.0005'],
      ['takerFee', '0.001'],
    ];
    await refused(
      s,
      '/admin/markets/add',
      [...form.slice(0, 6), ['takerFee', '0.0001']],
      3005,
      /rebate .* may not exceed the taker fee/,
    );
    await refused(
      s,
      '/admin/markets/add',
      [...form.slice(0, 6), ['takerFee', '0.5']],
      3005,
      /takerFee '0.5' must be a fraction from -0.1 to 0.1/,
    );
    await refused(
      s,
      '/admin/markets/add',
      [['market', 'sol_usdt'], ...form.slice(1)],
      3005,
      /unknown coin 'sol'/,
    );
    await refused(
      s,
      '/admin/markets/add',
      [['market', 'btc_usdt'], ...form.slice(1)],
      3005,
      /market btc_usdt exists/,
    );
    await refused(s, '/admin/markets/add', [['market', 'ethqc'], ...form.slice(1)], 3005, /<base>_<quote>/);
    await refused(s, '/admin/markets/add', [...form, ['status', 'closed']], 3005, /trading' or 'halted/);
    await refused(
      s,
      '/admin/markets/add',
      [...form.slice(0, 3), ['minAmount', '0.0001'], ...form.slice(4)],
      3003,
      /at most 3 decimals/,
    );
    const added = await s.call('/admin/markets/add', form);
    assert.equal(added.code, 1000, String(added.message));
    assert.deepEqual(
      [added.makerFee, added.takerFee, added.minAmount, added.minSize],
      ['-0.0005', '0.001', '0.001', '1'],
    );
    assert.equal(s.engine.market('eth_qc')?.makerFee, -500);

    await refused(
      s,
      '/admin/markets/change',
      [
        ['market', 'nope_qc'],
        ['takerFee', '0.001'],
      ],
      3005,
      /unknown market 'nope_qc'/,
    );
    await refused(s, '/admin/markets/change', [['market', 'eth_qc']], 3005, /nothing to change/);
    await refused(
      s,
      '/admin/markets/change',
      [
        ['market', 'eth_qc'],
        ['takerFee', '0.0002'],
      ],
      3005,
      /may not exceed/,
    );
    const changed = await s.call('/admin/markets/change', [
      ['market', 'eth_qc'],
      ['minSize', '2'],
      ['takerFee', '0.002'],
    ]);
    assert.equal(changed.code, 1000, String(changed.message));
    assert.equal(s.engine.market('eth_qc')?.minSize, 2_000_000);

    const alice = s.engine.userId('alice') ?? (s.must({ type: 'RegisterUser', name: 'alice' }), 1);
    s.must({
      type: 'CreditDeposit',
      depositId: 'd1',
      userId: alice,
      coin: 'eth',
      amount: 5_00000000,
      remark: '',
    });
    s.must({
      type: 'PlaceOrder',
      userId: alice,
      market: 'eth_qc',
      side: SELL,
      kind: 'limit',
      price: 300_000,
      amount: 1_000,
      acctType: 0,
      clientOrderId: '',
    });
    const closed = await s.call('/admin/markets/close', [['market', 'eth_qc']]);
    assert.deepEqual([closed.code, closed.status, closed.cancelled], [1000, 'closed', 1]);
    assert.deepEqual(s.engine.balance(alice, 'eth'), { available: 5_00000000, frozen: 0 });
    await refused(s, '/admin/markets/close', [['market', 'eth_qc']], 3005, /closed already/);
    // A mistyped market is told with the markets there are (eth_qc is closed: not offered).
    await refused(
      s,
      '/admin/markets/close',
      [['market', 'nope_qc']],
      3005,
      /^unknown market 'nope_qc': the markets are btc_usdt, [a-z_, ]+$/,
    );
    // Market names follow the signed API's rule (issue 32): lowercase only, never lowercased here.
    for (const [path, form] of [
      [
        '/admin/markets/status',
        [
          ['market', 'BTC_USDT'],
          ['status', 'halted'],
        ],
      ],
      [
        '/admin/markets/change',
        [
          ['market', 'BTC_USDT'],
          ['takerFee', '0.001'],
        ],
      ],
      ['/admin/markets/close', [['market', 'Btc_usdt']]],
      [
        '/admin/users/cancel-orders',
        [
          ['user', 'alice'],
          ['market', 'BTC_USDT'],
        ],
      ],
      ['/admin/markets/list', [['market', 'BTC_USDT']]],
      [
        '/admin/markets/add',
        [
          ['market', 'SOL_QC'],
          ['priceScale', '2'],
          ['amountScale', '2'],
          ['minAmount', '1'],
          ['minSize', '1'],
        ],
      ],
    ] as const) {
      await refused(
        s,
        path,
        form.map(([k, v]): [string, string] => [k, v]),
        3005,
        /^market '\w+' must be lowercase \('[a-z_]+'\)$/,
      );
    }
    for (const [path, form] of [
      [
        '/admin/markets/status',
        [
          ['market', 'btcusdt'],
          ['status', 'halted'],
        ],
      ],
      [
        '/admin/markets/change',
        [
          ['market', 'btcusdt'],
          ['takerFee', '0.001'],
        ],
      ],
      ['/admin/markets/list', [['market', 'btcusdt']]],
    ] as const) {
      const r = await s.call(
        path,
        form.map(([k, v]): [string, string] => [k, v]),
      );
      assert.match(String(r.message), /^unknown market 'btcusdt': the markets are btc_usdt, /, path);
      assert.doesNotMatch(String(r.message), /eth_qc/, path);
    }
    await refused(
      s,
      '/admin/markets/status',
      [
        ['market', 'eth_qc'],
        ['status', 'trading'],
      ],
      3005,
      /closed for good/,
    );
  });

  test('users: freeze, unfreeze, cancel orders, withdrawal limit; unknown ones refused', async () => {
    const s = setUp();
    s.must({ type: 'RegisterUser', name: 'alice' });
    s.must({
      type: 'CreditDeposit',
      depositId: 'd1',
      userId: 1,
      coin: 'usdt',
      amount: 1000_000000,
      remark: '',
    });
    const bid = {
      type: 'PlaceOrder',
      userId: 1,
      market: 'btc_usdt',
      side: BUY,
      kind: 'limit',
      price: 2_000_000,
      amount: 100,
      acctType: 0,
      clientOrderId: '',
    } as const;
    s.must(bid);
    s.must({ ...bid, market: 'eth_usdt', price: 200_000, amount: 1_000 });
    await refused(s, '/admin/users/freeze', [['user', 'nobody']], 3004, /no user named 'nobody'/);
    assert.deepEqual(await s.call('/admin/users/freeze', [['user', 'Alice']]), {
      code: 1000,
      message: 'success',
      user: 'alice',
      status: 'frozen',
    });
    assert.equal(s.apply(bid).result, 'ACCOUNT_FROZEN');
    await refused(s, '/admin/users/freeze', [['user', 'alice']], 3005, /frozen already/);
    assert.equal((await s.call('/admin/users/unfreeze', [['user', 'alice']])).status, 'active');

    await refused(
      s,
      '/admin/users/cancel-orders',
      [
        ['user', 'alice'],
        ['market', 'nope_usdt'],
      ],
      3005,
      /unknown market/,
    );
    const one = await s.call('/admin/users/cancel-orders', [
      ['user', 'alice'],
      ['market', 'eth_usdt'],
    ]);
    assert.deepEqual([one.code, one.cancelled], [1000, 1]);
    const all = await s.call('/admin/users/cancel-orders', [['user', 'alice']]);
    assert.deepEqual([all.code, all.cancelled, all.market], [1000, 1, null]);

    await refused(
      s,
      '/admin/users/withdraw-limit',
      [
        ['user', 'alice'],
        ['coin', 'nope'],
        ['limit', '1'],
      ],
      3005,
      /unknown coin 'nope'/,
    );
    await refused(
      s,
      '/admin/users/withdraw-limit',
      [
        ['user', 'alice'],
        ['coin', 'usdt'],
      ],
      3005,
      /either limit/,
    );
    await refused(
      s,
      '/admin/users/withdraw-limit',
      [
        ['user', 'alice'],
        ['coin', 'usdt'],
        ['limit', '-5'],
      ],
      3003,
      /must be an amount of usdt/,
    );
    const set = await s.call('/admin/users/withdraw-limit', [
      ['user', 'alice'],
      ['coin', 'usdt'],
      ['limit', '250.5'],
    ]);
    assert.deepEqual([set.code, set.limit, set.coinLimit], [1000, '250.5', '1000000']);
    assert.equal(s.engine.funds.userWithdrawLimit(1, 'usdt'), 250_500_000);
    const cleared = await s.call('/admin/users/withdraw-limit', [
      ['user', 'alice'],
      ['coin', 'usdt'],
      ['clear', 'true'],
    ]);
    assert.deepEqual([cleared.code, cleared.limit], [1000, null]);
    assert.equal(s.engine.funds.userWithdrawLimit(1, 'usdt'), undefined);
  });

  test('keys: list, rotate, revoke, reissue those the master key cannot open', async () => {
    const s = setUp();
    s.must({ type: 'RegisterUser', name: 'alice' });
    s.must({ type: 'RegisterUser', name: 'bob' });
    const created = await s.call('/admin/keys/create', [
      ['user', 'alice'],
      ['perms', 'asset,entrust'],
      ['ip', '10.0.0.1'],
    ]);
    const key = created.accessKey as string;
    // A key sealed under a master key since lost.
    s.must({
      type: 'CreateApiKey',
      userId: 2,
      accessKey: 'bob-key-lost',
      sealedSecret: 'lost:1',
      permissions: { asset: true, entrust: false, money: false, lever: false },
      ips: [],
    });
    const list = await s.call('/admin/keys/list', []);
    assert.equal(list.total, 2);
    assert.deepEqual(
      (list.keys as Json[]).map((k) => [k.accessKey, k.user, k.permissions, k.opens]),
      [
        [key, 'alice', ['asset', 'entrust'], true],
        ['bob-key-lost', 'bob', ['asset'], false],
      ],
    );
    assert.equal(JSON.stringify(list).includes('sealed'), false, 'no sealed secret listed');
    assert.equal(((await s.call('/admin/keys/list', [['user', 'bob']])).keys as Json[]).length, 1);
    await refused(s, '/admin/keys/list', [['user', 'carol']], 3004, /no user named 'carol'/);

    const rotated = await s.call('/admin/keys/rotate', [['key', key]]);
    assert.equal(rotated.code, 1000);
    assert.match(rotated.secretKey as string, /^secret-/);
    assert.deepEqual([rotated.permissions, rotated.ips], [['asset', 'entrust'], ['10.0.0.1']]);
    assert.notEqual(s.engine.apiKey(key)?.sealedSecret, `sealed:${key}:1`);
    await refused(s, '/admin/keys/rotate', [['key', 'no-such-key']], 3005, /no API key 'no-such-key'/);

    const reissued = await s.call('/admin/keys/reissue', []);
    assert.equal(reissued.code, 1000);
    assert.deepEqual(
      (reissued.reissued as Json[]).map((k) => k.accessKey),
      ['bob-key-lost'],
    );
    assert.match(s.engine.apiKey('bob-key-lost')?.sealedSecret ?? '', /^sealed:/);
    assert.deepEqual((await s.call('/admin/keys/reissue', [])).reissued, []);

    const revoked = await s.call('/admin/keys/revoke', [['key', key]]);
    assert.deepEqual([revoked.code, revoked.revoked], [1000, true]);
    assert.equal(s.engine.apiKey(key), undefined);
    await refused(s, '/admin/keys/revoke', [['key', key]], 3005, /no API key/);
  });

  test('every change is in the audit log with its command; the keys list is not', async () => {
    const s = setUp();
    s.must({ type: 'RegisterUser', name: 'alice' });
    await s.call('/admin/users/freeze', [['user', 'alice']]);
    await s.call('/admin/markets/change', [
      ['market', 'btc_usdt'],
      ['takerFee', '0.003'],
    ]);
    await s.call('/admin/keys/list', []);
    const entries = s.audit.list(10, 0).entries;
    assert.deepEqual(entries.map((e) => [e.action, e.commands.map((c) => c.type)]).reverse(), [
      ['users/freeze', ['SetUserStatus']],
      ['markets/change', ['ChangeMarket']],
    ]);
  });
});
