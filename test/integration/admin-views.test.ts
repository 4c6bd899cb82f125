/**
 * The operator's views against the real venue, through the CLI (tables and --json) and the admin
 * API: users, one user in full, solvency against the simulated chain's wallet, markets, the
 * venue's state, a rate-limit lock listed and lifted, and the audit log of every action taken,
 * kept across a restart. Bad input is refused with a clear message and changes nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AUDIT_FILE } from '../../src/api/admin/audit-log.ts';
import { writeMasterKeyFile } from '../../src/config/master-key.ts';
import type { ServerOptions } from '../../src/config/options.ts';
import { BUY, SELL } from '../../src/domain/commands.ts';
import { startVenue, type RunningVenue } from '../../src/main.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { bourseJson, runBourse, type CliRun } from '../fixtures/cli.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { testVenueOptions } from '../fixtures/venue-options.ts';

fileTimeLimit(import.meta.url);

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function options(root: string): ServerOptions {
  const masterKeyFile = join(root, 'master.key');
  if (!existsSync(masterKeyFile)) writeMasterKeyFile(masterKeyFile);
  // Two trade-API requests a minute per IP: the third locks it.
  return testVenueOptions({ dataDir: join(root, 'data'), masterKeyFile, ipRequestsPerMinute: 2 });
}

const cli = (argv: string[], env: Record<string, string>): Promise<CliRun> => runBourse(argv, { env });

/** A trade-API request from this machine (counted by the per-IP limit before anything else). */
function tradeApi(venue: RunningVenue): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: venue.http.port,
        path: '/api/getAccountInfo?accesskey=nobody',
        headers: { 'user-agent': 'Mozilla/5.0 test' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('the operator views, through the CLI and the admin API', () => {
  test('users, solvency, markets, status, limits and the audit log; bad input refused', async () => {
    const root = mkdtempSync(join(tmpdir(), 'bourse-views-'));
    roots.push(root);
    let venue = await startVenue(options(root), SILENT_LOG);
    const env = { BOURSE_DATA: venue.options.dataDir };
    try {
      // The actions the audit log must show, in order.
      const actions: string[][] = [
        ['user', 'create', 'alice'],
        ['user', 'create', 'bob'],
        ['deposit', 'credit', 'alice', 'usdt', '30'],
        ['deposit', 'credit', 'alice', 'btc', '1'],
        ['key', 'create', 'bob', '--perms', 'asset,entrust', '--ip', '10.0.0.7'],
        ['address', 'create', 'bob', 'usdt', '--chain', 'ERC20'],
      ];
      let secret = '';
      for (const argv of actions) {
        const r = await cli(argv, env);
        assert.equal(r.code, 0, `${argv.join(' ')}: ${r.err}`);
        secret = /secret key: (\S+)/.exec(r.out)?.[1] ?? secret;
      }
      assert.ok(secret.length > 10);
      const address = await bourseJson(['address', 'create', 'bob', 'usdt', '--chain', 'ERC20'], env);
      actions.push(['address', 'create', 'bob', 'usdt', '--chain', 'ERC20']);
      const deposit = ['chain', 'deposit', String(address.address), '100', '--chain', 'ERC20'];
      assert.equal((await cli(deposit, env)).code, 0);
      actions.push(deposit);
      assert.equal((await cli(['chain', 'mine', '20'], env)).code, 0);
      actions.push(['chain', 'mine', '20']);
      // Orders go in through the sequencer (the trade API is what the other tests drive).
      const order = {
        type: 'PlaceOrder',
        userId: 1,
        market: 'btc_usdt',
        kind: 'limit',
        acctType: 0,
      } as const;
      const bid = await venue.sequencer.submit({
        ...order,
        side: BUY,
        price: 2_000_000,
        amount: 10,
        clientOrderId: '',
      });
      assert.equal(bid.result, 'OK');
      const ask = await venue.sequencer.submit({
        ...order,
        side: SELL,
        price: 2_100_000,
        amount: 10,
        clientOrderId: '',
      });
      assert.equal(ask.result, 'OK');
      const take = await venue.sequencer.submit({
        ...order,
        userId: 2,
        side: BUY,
        kind: 'ioc',
        price: 2_100_000,
        amount: 5,
        clientOrderId: '',
      });
      assert.equal(take.result, 'OK');

      // Users.
      const users = await cli(['user', 'list'], env);
      assert.equal(users.code, 0, users.err);
      assert.match(users.out, /^id +name +created +status +keys +open orders +family\n/);
      assert.match(users.out, /\n +1 +alice +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ +active +0 +2\n/);
      assert.match(users.out, /\n +2 +bob +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ +active +1 +0\n/);
      assert.match(users.out, /users 1–2 of 2\n$/);
      const page = await bourseJson(['user', 'list', '--limit', '1', '--offset', '1'], env);
      assert.deepEqual(
        (page.users as { name: string }[]).map((u) => u.name),
        ['bob'],
      );
      assert.match(
        (await cli(['user', 'list', '--limit', '1'], env)).out,
        /users 1–1 of 2 \(--offset 1 for more\)/,
      );
      assert.deepEqual(
        ((await bourseJson(['user', 'list', '--search', 'BO'], env)).users as { id: number }[]).map(
          (u) => u.id,
        ),
        [2],
      );
      const bob = await cli(['user', 'show', 'bob'], env);
      assert.equal(bob.code, 0, bob.err);
      assert.match(bob.out, /^user bob \(id 2\): active, created \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\n/);
      assert.match(bob.out, /spot balances:\ncoin +available +frozen\nbtc +0\.000499 +0\nusdt +89\.5 +0\n/);
      assert.match(bob.out, /latest bills \(4 of 4\):\n/);
      assert.match(bob.out, /deposits \(1 of 1\):\n.*\n.*usdt +ERC20 +100 +credited/);
      assert.match(
        bob.out,
        /API keys \(1\):\naccess key +permissions +bound IPs +replay protection\n\S+ +asset,entrust +10\.0\.0\.7 +no/,
      );
      const alice = await bourseJson(['user', 'show', '1'], env);
      assert.equal((alice.openOrders as { total: number }).total, 2);
      assert.ok(!JSON.stringify(await bourseJson(['user', 'show', 'bob'], env)).includes('sealed'));

      // Solvency: alice's 30 usdt are an operator credit, not on the chain; bob's 100 are.
      const solvency = await bourseJson(['solvency', 'usdt'], env);
      assert.deepEqual((solvency.coins as Record<string, unknown>[])[0], {
        coin: 'usdt',
        // bob paid alice 10.5 for 0.0005 btc; she paid a 0.2 % maker fee on it.
        usersAvailable: '109.979',
        usersFrozen: '20',
        isolatedAvailable: '0',
        isolatedFrozen: '0',
        crossAvailable: '0',
        crossFrozen: '0',
        marginAvailable: '0',
        marginFrozen: '0',
        usersTotal: '129.979',
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
        wallet: '100',
        difference: '-30',
      });
      const table = await cli(['solvency'], env);
      assert.match(
        table.out,
        /^coin +users available +users frozen +margin +lending pool +insurance +fee income +books +loans +bad debt +wallet +difference\n/,
      );
      assert.match(table.out, /\nusdt +109\.979 +20 +0 +0 +0 +0\.021 +130 +0 +0 +100 +-30\n/);
      assert.match(
        table.out,
        /\nbooks = deposited − withdrawn \+ pool funded, insurance = its income − its cover, and the pool = its funding \+ interest − bad debt, for every coin\n?$/,
      );

      // Markets and the venue.
      const markets = await cli(['markets', 'btc_usdt'], env);
      assert.match(markets.out, /\nbtc_usdt +trading +0\.002 +0\.002 +20000 +21000 +21000 +0\.0005 +2\n/);
      const status = await bourseJson(['status'], env);
      assert.equal(status.ready, true);
      assert.equal((status.journal as { lastSeq: number }).lastSeq, venue.sequencer.lastSeq);
      assert.match(
        (await cli(['status'], env)).out,
        /^ready: yes \(running\)\njournal: seq \d+, durable to \d+\n/,
      );

      // A rate-limit lock: listed, lifted, gone.
      for (let i = 0; i < 3; i++) await tradeApi(venue);
      const locks = await cli(['limits'], env);
      assert.match(locks.out, /^kind +IP or key +until\nip +127\.0\.0\.1 +\d{4}-/);
      assert.match((await cli(['status'], env)).out, /rate-limit locks in force: 1/);
      assert.match(
        (await cli(['limits', 'lift', '127.0.0.1'], env)).out,
        /^lifted the lock on ip 127\.0\.0\.1/,
      );
      actions.push(['limits', 'lift', '127.0.0.1']);
      assert.match((await cli(['limits'], env)).out, /^no locks\n$/);

      // Bad input: refused with the reason, exit 1, nothing changed (the state hash stays).
      const before = await bourseJson(['state'], env);
      const refusals: [string[], RegExp][] = [
        [['user', 'show', 'nobody'], /refused \(3004\): no user named or numbered 'nobody'/],
        [
          ['markets', 'doge_usdt'],
          /refused \(3005\): unknown market 'doge_usdt': the markets are btc_usdt, eth_usdt, /,
        ],
        [['solvency', 'doge'], /refused \(3005\): coin: unknown coin 'doge'/],
        [['user', 'list', '--limit', '0'], /refused \(3005\): limit '0' must be an integer from 1 to 1000/],
        [['audit', '--offset', 'x'], /refused \(3005\): offset 'x'/],
        [['limits', 'lift', '10.1.2.3'], /refused \(3005\): no rate-limit lock on '10\.1\.2\.3'/],
      ];
      for (const [argv, message] of refusals) {
        const r = await cli(argv, env);
        assert.equal(r.code, 1, argv.join(' '));
        assert.match(r.err, message);
      }
      actions.push(['limits', 'lift', '10.1.2.3']);
      assert.deepEqual(await bourseJson(['state'], env), before);

      // The audit log: each action, newest first, the secret of the key never in it.
      const audit = await bourseJson(['audit', '--limit', '100'], env);
      const entries = (
        audit.entries as { action: string; code: number; params: Record<string, unknown> }[]
      ).reverse();
      assert.deepEqual(
        entries.map((e) => e.action),
        [
          'users/create',
          'users/create',
          'deposits/credit',
          'deposits/credit',
          'keys/create',
          'addresses/create',
          'addresses/create',
          'chain/deposit',
          'chain/mine',
          'limits/lift',
          'limits/lift',
        ],
      );
      assert.equal(entries.length, actions.length);
      assert.deepEqual(entries[4]?.params, { user: 'bob', perms: 'asset,entrust', ip: '10.0.0.7' });
      assert.equal(entries.at(-1)?.code, 3005);
      assert.ok(!readFileSync(join(venue.options.dataDir, AUDIT_FILE), 'utf8').includes(secret));
      const human = await cli(['audit', '--limit', '2'], env);
      assert.match(human.out, /^ +# +time +operator +action +parameters +result +commands\n/);
      // The CLI sends the bootstrap token: its actions are the operator admin.token's.
      assert.match(human.out, /admin\.token +limits\/lift +subject=10\.1\.2\.3 +3005 no rate-limit lock/);
      assert.match(human.out, /actions 1–2 of 11 \(--offset 2 for more\)\n$/);
    } finally {
      await venue.close();
    }

    // After a restart the audit log is still there, and goes on.
    venue = await startVenue(options(root), SILENT_LOG);
    try {
      assert.equal((await cli(['user', 'create', 'carol'], env)).code, 0);
      const audit = await bourseJson(['audit', '--limit', '1'], env);
      assert.equal(audit.total, 12);
      assert.equal((audit.entries as { id: number; action: string }[])[0]?.id, 12);
    } finally {
      await venue.close();
    }
  });
});
