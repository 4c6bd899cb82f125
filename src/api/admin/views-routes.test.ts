import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import { BUY, SELL, type Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import { SqliteHistoryStore } from '../../store/sqlite-history-store.ts';
import { MemoryRateLimiter } from '../auth/rate-limit.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { adminRoutes, READ_ONLY_PATHS } from './admin-routes.ts';
import { AUDIT_FILE, FileAuditLog, MemoryAuditLog, REDACTED, type AuditLog } from './audit-log.ts';

const TOKEN = 'a'.repeat(64);
const T0 = 1_700_000_000_000;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Harness {
  engine: Engine;
  limiter: MemoryRateLimiter;
  clock: { now: number };
  audit: AuditLog;
  call: (path: string, form?: [string, string][], token?: string) => Promise<Record<string, unknown>>;
  submit: (command: Command) => Promise<void>;
  paths: string[];
}

function setUp(audit: AuditLog = new MemoryAuditLog()): Harness {
  const engine = new Engine(DEFAULT_VENUE);
  const history = SqliteHistoryStore.open(':memory:');
  let seq = 0;
  const venue: VenuePort = {
    engine,
    history,
    now: () => T0,
    submit: async (command: Command) => {
      seq += 1;
      const r = engine.apply({ ...command, seq, time: T0 + seq });
      await history.applyBatch([{ seq, time: T0 + seq, events: r.events }]);
      return r;
    },
  };
  const clock = { now: T0 };
  const limiter = new MemoryRateLimiter({ clock: () => clock.now, ipRequestsPerMinute: 2 });
  let keys = 0;
  const routes = new Map<string, Route>(
    adminRoutes({
      venue,
      token: TOKEN,
      instance: 'i'.repeat(32),
      snapshot: () => Promise.resolve('/tmp/snapshot'),
      funds: { chains: () => [], simulator: undefined, syncChains: () => Promise.resolve() },
      keys: {
        issue: () => ({
          accessKey: `key-${String(++keys).padStart(8, '0')}`,
          secretKey: 'the-secret',
          sealedSecret: 'sealed',
        }),
      },
      audit,
      views: {
        walletHoldings: (coin) => (coin === 'usdt' ? 25_000_000n : 0n),
        volume24h: () => '0',
        probes: {
          ready: () => ({
            ready: true,
            phase: 'running',
            checks: { journal: { ok: true, durableSeq: seq }, history: { ok: true, lag: 0, maxLag: 10 } },
          }),
          lastSnapshot: () => ({ seq: 1, at: T0 }),
        },
        limits: limiter,
      },
    }).map((r) => [r.path, r]),
  );
  const call = async (
    path: string,
    form: [string, string][] = [],
    token = TOKEN,
  ): Promise<Record<string, unknown>> => {
    const request: ApiRequest = {
      method: 'POST',
      path,
      params: form.map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: { authorization: `Bearer ${token}` },
      receivedAt: 0,
    };
    const route = routes.get(path);
    assert.ok(route !== undefined, `no route ${path}`);
    const reply: ApiReply = await route.handler(request);
    return 'json' in reply ? (reply.json as Record<string, unknown>) : {};
  };
  return {
    paths: [...routes.keys()],
    engine,
    limiter,
    clock,
    audit,
    call,
    submit: async (command) => {
      const r = await venue.submit(command);
      assert.equal(r.result, 'OK', r.message);
    },
  };
}

/** alice and bob with money; alice rests a bid and an ask on btc_usdt; bob has a key. */
async function trading(h: Harness): Promise<void> {
  for (const name of ['alice', 'bob', 'carol']) {
    assert.equal((await h.call('/admin/users/create', [['name', name]])).code, 1000);
  }
  const credit = async (user: string, coin: string, amount: string): Promise<void> => {
    const r = await h.call('/admin/deposits/credit', [
      ['user', user],
      ['coin', coin],
      ['amount', amount],
    ]);
    assert.equal(r.code, 1000, String(r.message));
  };
  await credit('alice', 'usdt', '30');
  await credit('alice', 'btc', '1');
  await credit('bob', 'usdt', '100');
  await h.call('/admin/keys/create', [
    ['user', 'bob'],
    ['perms', 'asset,entrust'],
    ['ip', '10.0.0.7'],
  ]);
  // 0.001 btc at 20000.00 (price ticks of 0.01, lots of 0.0001).
  const order = { type: 'PlaceOrder', userId: 1, market: 'btc_usdt', kind: 'limit', acctType: 0 } as const;
  await h.submit({ ...order, side: BUY, price: 2_000_000, amount: 10, clientOrderId: 'bid1' });
  await h.submit({ ...order, side: SELL, price: 2_100_000, amount: 10, clientOrderId: '' });
  // bob takes the ask: a trade, fees, bills.
  await h.submit({
    ...order,
    userId: 2,
    side: BUY,
    kind: 'ioc',
    price: 2_100_000,
    amount: 5,
    clientOrderId: '',
  });
}

const stateOf = (engine: Engine): string => JSON.stringify(engine.snapshot());

describe('users: margin accounts (issue 14)', () => {
  test('show lists each margin account with what it holds and owes, and its risk rate', async () => {
    const h = setUp();
    await trading(h);
    await h.submit({
      type: 'FundLendingPool',
      fundingId: 'p1',
      coin: 'usdt',
      amount: 1_000_000_000,
      dailyRatePpm: 500,
      days: 10,
    });
    await h.submit({
      type: 'MarginTransfer',
      userId: 2,
      direction: 'in',
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 10_000_000,
    });
    await h.submit({
      type: 'Borrow',
      userId: 2,
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 20_000_000,
      rollOver: false,
    });
    const bob = await h.call('/admin/users/show', [['user', 'bob']]);
    const accounts = bob.accounts as {
      account: string;
      riskRate?: string;
      balances: Record<string, string>[];
    }[];
    assert.deepEqual(
      accounts.map((a) => a.account),
      ['spot', 'isolated btc_usdt'],
    );
    assert.equal(accounts[1]?.riskRate, '1.4999');
    assert.deepEqual(
      accounts[1]?.balances.find((b) => b.coin === 'usdt'),
      {
        coin: 'usdt',
        available: '30',
        frozen: '0',
        borrowed: '20',
        interest: '0.000416',
      },
    );
  });
});

describe('users', () => {
  test('list pages and searches by name or id, with keys and open orders counted', async () => {
    const h = setUp();
    await trading(h);
    const all = await h.call('/admin/users/list');
    assert.equal(all.total, 3);
    assert.deepEqual(all.users, [
      {
        id: 1,
        name: 'alice',
        created: T0 + 1,
        status: 'active',
        demo: false,
        keys: 0,
        openOrders: 2,
        mainUser: null,
        subAccounts: [],
      },
      {
        id: 2,
        name: 'bob',
        created: T0 + 2,
        status: 'active',
        demo: false,
        keys: 1,
        openOrders: 0,
        mainUser: null,
        subAccounts: [],
      },
      {
        id: 3,
        name: 'carol',
        created: T0 + 3,
        status: 'active',
        demo: false,
        keys: 0,
        openOrders: 0,
        mainUser: null,
        subAccounts: [],
      },
    ]);
    const page = await h.call('/admin/users/list', [
      ['limit', '1'],
      ['offset', '1'],
    ]);
    assert.deepEqual(
      { total: page.total, names: (page.users as { name: string }[]).map((u) => u.name) },
      { total: 3, names: ['bob'] },
    );
    const search = await h.call('/admin/users/list', [['search', 'AR']]);
    assert.deepEqual(
      (search.users as { name: string }[]).map((u) => u.name),
      ['carol'],
    );
    const byId = await h.call('/admin/users/list', [['search', '2']]);
    assert.deepEqual(
      (byId.users as { name: string }[]).map((u) => u.name),
      ['bob'],
    );
  });

  test('the tree of sub-accounts: a main user lists its sub-accounts, a sub-account names its main user', async () => {
    const h = setUp();
    await trading(h);
    for (const name of ['alice-a', 'alice-b'])
      await h.submit({ type: 'AddSubUser', mainUserId: 1, name, memo: '', passwordHash: 'h' });
    const all = await h.call('/admin/users/list');
    const rows = all.users as { name: string; mainUser: string | null; subAccounts: string[] }[];
    assert.deepEqual(
      rows.map((u) => [u.name, u.mainUser, u.subAccounts]),
      [
        ['alice', null, ['alice-a', 'alice-b']],
        ['bob', null, []],
        ['carol', null, []],
        ['alice-a', 'alice', []],
        ['alice-b', 'alice', []],
      ],
    );
    const sub = await h.call('/admin/users/show', [['user', 'alice-b']]);
    assert.equal((sub.user as { mainUser: string }).mainUser, 'alice');
  });

  test('show: balances, open orders, bills, deposits, keys without secrets; by name or id', async () => {
    const h = setUp();
    await trading(h);
    const alice = await h.call('/admin/users/show', [['user', 'alice']]);
    assert.equal(alice.code, 1000);
    const spot = (alice.accounts as { account: string; balances: { coin: string }[] }[])[0];
    assert.equal(spot?.account, 'spot');
    assert.deepEqual(
      spot?.balances.find((b) => b.coin === 'usdt'),
      // 30 - 20 frozen for the bid + 10.5 from the sale less the 0.2 % maker fee.
      { coin: 'usdt', available: String(10 + 10.5 - 0.021), frozen: '20' },
    );
    const open = alice.openOrders as { total: number; rows: Record<string, unknown>[] };
    assert.equal(open.total, 2);
    assert.deepEqual(
      { ...open.rows[0], time: 0 },
      {
        id: 1,
        market: 'btc_usdt',
        side: 'buy',
        kind: 'limit',
        price: '20000',
        amount: '0.001',
        filled: '0',
        time: 0,
        clientOrderId: 'bid1',
      },
    );
    const bills = alice.bills as { total: number; rows: { type: string }[] };
    assert.ok(bills.total >= 4 && bills.rows.some((b) => b.type === 'sell'));
    assert.equal((alice.deposits as { total: number }).total, 2);
    const bob = await h.call('/admin/users/show', [
      ['user', '2'],
      ['limit', '1'],
    ]);
    assert.equal((bob.user as { name: string }).name, 'bob');
    assert.deepEqual(bob.keys, [
      {
        accessKey: 'key-00000001',
        permissions: ['asset', 'entrust'],
        ips: ['10.0.0.7'],
        replayProtection: false,
      },
    ]);
    assert.equal((bob.bills as { rows: unknown[] }).rows.length, 1);
    assert.ok(!JSON.stringify(bob).includes('sealed') && !JSON.stringify(bob).includes('the-secret'));
  });
});

describe('solvency, markets, venue', () => {
  test('solvency: every account kind + fee income against the wallet, the difference shown', async () => {
    const h = setUp();
    await trading(h);
    const all = await h.call('/admin/solvency');
    const usdt = (all.coins as Record<string, unknown>[]).find((c) => c.coin === 'usdt');
    // 130 usdt credited by the operator; the wallet (this test's) holds 25.
    assert.deepEqual(usdt, {
      coin: 'usdt',
      usersAvailable: String(130 - 20 - 0.021),
      usersFrozen: '20',
      isolatedAvailable: '0',
      isolatedFrozen: '0',
      crossAvailable: '0',
      crossFrozen: '0',
      marginAvailable: '0',
      marginFrozen: '0',
      usersTotal: String(130 - 0.021),
      lendingPoolAvailable: '0',
      lendingPoolFrozen: '0',
      insurance: '0',
      feeIncome: '0.021',
      books: '130',
      deposited: '130',
      withdrawn: '0',
      poolFunded: '0',
      imbalance: '0',
      loans: {
        pool: { principal: '0', interest: '0' },
        users: { principal: '0', interest: '0' },
        total: '0',
      },
      badDebt: '0',
      badDebtPool: { principal: '0', interest: '0' },
      badDebtUsers: { principal: '0', interest: '0' },
      poolInterest: '0',
      poolImbalance: '0',
      insuranceIn: { interestShare: '0', liquidationFees: '0' },
      insuranceOut: '0',
      insuranceImbalance: '0',
      wallet: '25',
      difference: '-105',
    });
    const btc = await h.call('/admin/solvency', [['coin', 'BTC']]);
    assert.equal((btc.coins as unknown[]).length, 1);
  });

  test('markets: status, fees, best bid and ask, open orders', async () => {
    const h = setUp();
    await trading(h);
    const one = await h.call('/admin/markets/list', [['market', 'btc_usdt']]);
    const m = (one.markets as Record<string, unknown>[])[0];
    assert.deepEqual(
      { ...m, makerFee: typeof m?.makerFee },
      {
        market: 'btc_usdt',
        status: 'trading',
        makerFee: 'string',
        takerFee: m?.takerFee,
        minAmount: '0.0001',
        minSize: '5',
        bestBid: '20000',
        bestAsk: '21000',
        last: '21000',
        volume24h: '0',
        openOrders: 2,
      },
    );
    const page = await h.call('/admin/markets/list', [['limit', '2']]);
    assert.equal((page.markets as unknown[]).length, 2);
    assert.ok((page.total as number) > 2);
  });

  test('venue: journal position, snapshot, history lag, locks', async () => {
    const h = setUp();
    await trading(h);
    const v = await h.call('/admin/venue');
    assert.equal(v.code, 1000);
    assert.deepEqual(v.snapshot, { seq: 1, at: T0 });
    assert.equal((v.journal as { lastSeq: number }).lastSeq, h.engine.lastSeq);
    assert.equal((v.history as { lag: number }).lag, 0);
    assert.equal(v.openOrders, 2);
    assert.equal(v.rateLimitLocks, 0);
  });
});

describe('rate-limit locks', () => {
  test('listed, lifted once; a second lift is refused', async () => {
    const h = setUp();
    for (let i = 0; i < 3; i++) h.limiter.hitIp('10.9.9.9');
    const list = await h.call('/admin/limits/list');
    assert.deepEqual(list.locks, [{ kind: 'ip', subject: '10.9.9.9', until: T0 + 3_600_000 }]);
    const lift = await h.call('/admin/limits/lift', [['subject', '10.9.9.9']]);
    assert.equal(lift.code, 1000);
    assert.equal(h.limiter.hitIp('10.9.9.9').allowed, true);
    const again = await h.call('/admin/limits/lift', [['subject', '10.9.9.9']]);
    assert.equal(again.code, 3005);
    assert.match(String(again.message), /no rate-limit lock on '10\.9\.9\.9'/);
  });
});

describe('bad input is refused with a clear message and changes nothing', () => {
  const cases: [string, [string, string][], number, RegExp][] = [
    ['/admin/users/show', [['user', 'nobody']], 3004, /no user named or numbered 'nobody'/],
    ['/admin/users/show', [['user', '99']], 3004, /'99'/],
    ['/admin/users/show', [], 3005, /user is required/],
    [
      '/admin/users/show',
      [
        ['user', 'alice'],
        ['limit', '900'],
        ['offset', '200'],
      ],
      3005,
      /offset \+ limit/,
    ],
    ['/admin/users/list', [['limit', '0']], 3005, /limit '0' must be an integer from 1 to 1000/],
    ['/admin/users/list', [['limit', 'ten']], 3005, /limit 'ten'/],
    ['/admin/users/list', [['offset', '-1']], 3005, /offset '-1'/],
    ['/admin/users/list', [['search', 'x'.repeat(65)]], 3005, /search must be at most 64/],
    ['/admin/solvency', [['coin', 'doge']], 3005, /unknown coin 'doge'/],
    ['/admin/solvency', [['coin', '!']], 3005, /./],
    ['/admin/markets/list', [['market', 'doge_usdt']], 3005, /unknown market 'doge_usdt'/],
    ['/admin/markets/list', [['limit', '1001']], 3005, /limit/],
    ['/admin/limits/list', [['offset', '1.5']], 3005, /offset/],
    ['/admin/limits/lift', [], 3005, /subject is required/],
    ['/admin/audit/list', [['limit', '']], 3005, /limit/],
  ];
  for (const [path, form, code, message] of cases) {
    test(`${path} ${JSON.stringify(form).slice(0, 60)}`, async () => {
      const h = setUp();
      await trading(h);
      const before = stateOf(h.engine);
      const r = await h.call(path, form);
      assert.equal(r.code, code, String(r.message));
      assert.match(String(r.message), message);
      assert.equal(stateOf(h.engine), before);
    });
  }
  test('without the token: 1003, and no audit entry', async () => {
    const h = setUp();
    assert.equal((await h.call('/admin/users/create', [['name', 'x']], 'b'.repeat(64))).code, 1003);
    assert.equal((await h.call('/admin/users/list', [], 'b'.repeat(64))).code, 1003);
    assert.equal(h.audit.list(10, 0).total, 0);
  });
});

describe('audit log', () => {
  test('every admin action appears, with its parameters (secrets redacted), result and commands', async () => {
    const h = setUp();
    await trading(h);
    await h.call('/admin/fund-password/set', [
      ['user', 'alice'],
      ['password', 'hunter22'],
    ]);
    await h.call('/admin/markets/status', [
      ['market', 'btc_usdt'],
      ['status', 'halted'],
    ]);
    await h.call('/admin/deposits/credit', [
      ['user', 'nobody'],
      ['coin', 'usdt'],
      ['amount', '1'],
    ]);
    await h.call('/admin/snapshot');
    for (let i = 0; i < 3; i++) h.limiter.hitIp('10.1.1.1');
    await h.call('/admin/limits/lift', [['subject', '10.1.1.1']]);
    // Reads are not actions.
    await h.call('/admin/users/list');
    await h.call('/admin/state');
    await h.call('/admin/audit/list');

    const { total, entries } = h.audit.list(100, 0);
    const actions = [...entries].reverse().map((e) => e.action);
    assert.deepEqual(actions, [
      'users/create',
      'users/create',
      'users/create',
      'deposits/credit',
      'deposits/credit',
      'deposits/credit',
      'keys/create',
      'fund-password/set',
      'markets/status',
      'deposits/credit',
      'snapshot',
      'limits/lift',
    ]);
    assert.equal(total, actions.length);
    const byAction = (a: string): (typeof entries)[number] =>
      entries.find((e) => e.action === a) as (typeof entries)[number];
    const password = byAction('fund-password/set');
    assert.deepEqual(password.params, { user: 'alice', password: REDACTED });
    assert.deepEqual(password.commands, [{ type: 'SetFundPassword', result: 'OK' }]);
    assert.equal(password.code, 1000);
    assert.ok(password.seqAfter !== undefined && password.seqAfter > password.seqBefore);
    const key = byAction('keys/create');
    assert.deepEqual(key.params, { user: 'bob', perms: 'asset,entrust', ip: '10.0.0.7' });
    assert.ok(!JSON.stringify(entries).includes('the-secret'));
    const refused = entries[entries.length - actions.length + 2];
    assert.equal(refused?.action, 'deposits/credit');
    assert.equal(refused?.code, 3004);
    assert.deepEqual(refused?.commands, []);
    assert.equal(byAction('limits/lift').code, 1000);
    assert.deepEqual(byAction('snapshot').commands, []);
    // Paging: newest first.
    const page = h.audit.list(2, 1);
    assert.deepEqual(
      page.entries.map((e) => e.action),
      ['snapshot', 'deposits/credit'],
    );
  });

  test('every route that is not a read is audited, refused or not', async () => {
    const h = setUp();
    const actions = h.paths.filter((p) => !READ_ONLY_PATHS.has(p));
    // Those there are today; a new one is audited without being named anywhere.
    assert.ok(actions.length >= 18, actions.join(' '));
    for (const path of actions) await h.call(path, [['user', 'nobody']]);
    const { entries } = h.audit.list(1000, 0);
    assert.deepEqual(
      [...entries].reverse().map((e) => `/admin/${e.action}`),
      actions,
    );
    for (const e of entries) {
      assert.equal(typeof e.code, 'number', e.action);
      assert.deepEqual(e.params, { user: 'nobody' });
    }
  });

  test('the read-only paths are routes that record nothing and change nothing', async () => {
    const h = setUp();
    await trading(h);
    const before = { state: stateOf(h.engine), audited: h.audit.list(1, 0).total };
    for (const path of READ_ONLY_PATHS) {
      // Some refuse for want of a parameter: what counts is that the route exists.
      assert.equal(typeof (await h.call(path)).code, 'number', path);
    }
    assert.deepEqual({ state: stateOf(h.engine), audited: h.audit.list(1, 0).total }, before);
  });

  test('the file: durable lines, listed after a restart; an action cut short shows as unknown', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-audit-'));
    dirs.push(dir);
    const path = join(dir, AUDIT_FILE);
    const first = new FileAuditLog(path);
    const a = first.begin({ time: T0, action: 'users/create', params: { name: 'x' }, seqBefore: 4 });
    first.end(a, {
      code: 1000,
      message: 'success',
      commands: [{ type: 'RegisterUser', result: 'OK' }],
      seqAfter: 5,
      ms: 1,
    });
    first.begin({ time: T0 + 1, action: 'snapshot', params: {}, seqBefore: 5 });
    first.close();
    // A torn write at the end (a crash mid-line) is skipped, and the next line starts afresh.
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"t":"end","id":2,"co`);
    const second = new FileAuditLog(path);
    const listed = second.list(10, 0);
    assert.equal(listed.total, 2);
    assert.equal(listed.entries[0]?.code, undefined);
    assert.match(listed.entries[0]?.message ?? '', /server stopped while it ran/);
    assert.equal(listed.entries[1]?.seqAfter, 5);
    const c = second.begin({ time: T0 + 2, action: 'users/create', params: {}, seqBefore: 6 });
    assert.equal(c, 3);
    second.end(c, { code: 1000, message: 'success', commands: [], seqAfter: 7, ms: 0 });
    assert.equal(second.list(1, 0).entries[0]?.code, 1000);
    second.close();
  });
});

describe('venue-wide lists (issue 31): deposits and trades of every user, with filters', () => {
  test('deposits by user, coin, status and time, newest first, paged', async () => {
    const h = setUp();
    await trading(h);
    const all = await h.call('/admin/deposits/list');
    assert.equal(all.total, 3);
    const rows = all.deposits as Record<string, unknown>[];
    assert.deepEqual(
      rows.map((d) => [d.user, d.coin, d.amount, d.status]),
      [
        ['bob', 'usdt', '100', 'credited'],
        ['alice', 'btc', '1', 'credited'],
        ['alice', 'usdt', '30', 'credited'],
      ],
    );
    const t = (i: number): number => Number(rows[i]?.time);
    for (const [form, expected] of [
      [[['user', 'alice']], 2],
      [[['user', '2']], 1],
      [[['coin', 'usdt']], 2],
      [[['status', 'confirming']], 0],
      [[['from', String(t(1))]], 2],
      [
        [
          ['from', String(t(1))],
          ['to', String(t(1))],
        ],
        1,
      ],
      [
        [
          ['user', 'alice'],
          ['coin', 'btc'],
        ],
        1,
      ],
    ] as [[string, string][], number][]) {
      assert.equal((await h.call('/admin/deposits/list', form)).total, expected, JSON.stringify(form));
    }
    const second = await h.call('/admin/deposits/list', [
      ['limit', '1'],
      ['offset', '1'],
    ]);
    assert.deepEqual(
      (second.deposits as Record<string, unknown>[]).map((d) => d.coin),
      ['btc'],
    );
    for (const [form, message] of [
      [[['user', 'nobody']], /^no user named or numbered 'nobody'$/],
      [[['coin', 'doge1']], /unknown coin/],
      [[['status', 'lost']], /^status 'lost' must be one of confirming, credited, failed$/],
      [
        [
          ['from', '10'],
          ['to', '5'],
        ],
        /^from \(10\) must not be after to \(5\)$/,
      ],
      [[['from', '-1']], /^from '-1' must be an integer/],
    ] as [[string, string][], RegExp][]) {
      const r = await h.call('/admin/deposits/list', form);
      assert.equal(r.code === 3004 || r.code === 3005, true, JSON.stringify([form, r]));
      assert.match(String(r.message), message);
    }
  });

  test('a trade older than the latest 1000 of its market is still found (every trade the store holds)', async () => {
    const h = setUp();
    await trading(h);
    for (const [user, coin, amount] of [
      ['carol', 'btc', '1'],
      ['bob', 'usdt', '7000'],
    ] as const) {
      const r = await h.call('/admin/deposits/credit', [
        ['user', user],
        ['coin', coin],
        ['amount', amount],
      ]);
      assert.equal(r.code, 1000, String(r.message));
    }
    const order = { type: 'PlaceOrder', market: 'btc_usdt', acctType: 0, clientOrderId: '' } as const;
    await h.submit({ ...order, userId: 3, kind: 'limit', side: SELL, price: 2_050_000, amount: 3100 });
    for (let i = 0; i < 1001; i++)
      await h.submit({ ...order, userId: 2, kind: 'ioc', side: BUY, price: 2_050_000, amount: 3 });
    const all = await h.call('/admin/trades/list', [['limit', '1']]);
    assert.deepEqual([all.total, all.capped], [1002, false]);
    // Alice's one trade, the market's first, behind 1001 newer ones.
    const alice = await h.call('/admin/trades/list', [['user', 'alice']]);
    assert.equal(alice.total, 1);
    assert.deepEqual(
      (alice.trades as Record<string, unknown>[]).map((t) => [t['maker'], t['taker'], t['price']]),
      [['alice', 'bob', '21000']],
    );
    const carol = await h.call('/admin/trades/list', [
      ['user', 'carol'],
      ['offset', '1000'],
    ]);
    assert.deepEqual([carol.total, (carol.trades as unknown[]).length], [1001, 1]);
  });

  test('trades of every market, or one, by user (taker or maker) and time', async () => {
    const h = setUp();
    await trading(h);
    const all = await h.call('/admin/trades/list');
    assert.equal(all.total, 1);
    const [trade] = all.trades as Record<string, unknown>[];
    assert.deepEqual(
      [
        trade?.market,
        trade?.price,
        trade?.amount,
        trade?.value,
        trade?.takerSide,
        trade?.taker,
        trade?.maker,
      ],
      ['btc_usdt', '21000', '0.0005', '10.5', 'buy', 'bob', 'alice'],
    );
    for (const [form, expected] of [
      [[['user', 'alice']], 1],
      [[['user', 'bob']], 1],
      [[['user', 'carol']], 0],
      [[['market', 'eth_usdt']], 0],
      [
        [
          ['market', 'btc_usdt'],
          ['to', String(Number(trade?.time) - 1)],
        ],
        0,
      ],
    ] as [[string, string][], number][]) {
      assert.equal((await h.call('/admin/trades/list', form)).total, expected, JSON.stringify(form));
    }
    const upper = await h.call('/admin/trades/list', [['market', 'BTC_USDT']]);
    assert.equal(upper.message, "market 'BTC_USDT' must be lowercase ('btc_usdt')");
    assert.equal(all.capped, false);
    const deep = await h.call('/admin/trades/list', [
      ['offset', '9990'],
      ['limit', '20'],
    ]);
    assert.equal(deep.code, 3005);
    assert.equal(
      deep.message,
      'offset + limit (10010) must be at most 10000: narrow the list with market, user, from or to',
    );
  });
});
