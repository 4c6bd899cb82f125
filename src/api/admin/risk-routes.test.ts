import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callRoute, liquidatedVenue } from '../../../test/fixtures/liquidation-venue.ts';
import { TestVenue } from '../../../test/fixtures/signed-venue.ts';
import { READ_ONLY_PATHS } from './admin-routes.ts';
import { RISK_READ_PATHS, riskAdminRoutes } from './risk-routes.ts';
import { viewsRoutes } from './views-routes.ts';
import { findCommand, type AdminCall } from '../../cli/commands.ts';
import { BUY } from '../../domain/commands.ts';
import { limitOrder } from '../../../test/fixtures/engine-driver.ts';
import { gap, longVenue } from '../../../test/fixtures/liquidation-venue.ts';

type Json = Record<string, unknown>;

function harness(venue = new TestVenue()): {
  venue: TestVenue;
  call: (path: string, form?: [string, string][]) => Promise<Json>;
} {
  const routes = riskAdminRoutes({ venue });
  return { venue, call: (path, form = []) => callRoute(routes, path, form) };
}

const liquidated = async (): Promise<ReturnType<typeof harness>> => harness(await liquidatedVenue());

describe('liquidations and the insurance fund for the operator', () => {
  test('the read-only paths are not audited', () => {
    for (const path of RISK_READ_PATHS) assert.ok(READ_ONLY_PATHS.has(path), path);
  });

  test('no liquidation yet: an empty list, a fund at zero', async () => {
    const h = harness();
    const list = await h.call('/admin/liquidations/list');
    assert.deepEqual([list.code, list.total, list.liquidations], [1000, 0, []]);
    const ins = await h.call('/admin/insurance', [['coin', 'USDT']]);
    assert.deepEqual(ins.coins, [
      {
        coin: 'usdt',
        available: '0',
        interestShare: '0',
        liquidationFees: '0',
        covered: '0',
        badDebt: '0',
      },
    ]);
  });

  test('a liquidation is listed with its owner, shown in full, and its fee is in the fund', async () => {
    const h = await liquidated();
    const list = await h.call('/admin/liquidations/list');
    assert.equal(list.total, 1);
    const [row] = list.liquidations as Json[];
    assert.deepEqual(
      [row?.id, row?.user, row?.marketName, row?.status, row?.markPrice, row?.riskRate],
      [1, 'alice', 'btcusdt', 'done', '24049.02', '1.0733'],
    );
    assert.deepEqual(
      (await h.call('/admin/liquidations/show', [['id', '1']])).liquidation,
      row,
      'show gives the listed record',
    );
    for (const [form, total] of [
      [[['user', 'alice']], 1],
      [[['user', 'bob']], 0],
      [[['market', 'btc_usdt']], 1],
      [[['market', 'eth_usdt']], 0],
      [[['status', 'running']], 0],
      [[['status', 'done']], 1],
    ] as [[string, string][], number][]) {
      const r = await h.call('/admin/liquidations/list', form);
      assert.equal(r.total, total, JSON.stringify(form));
    }
    // Market names follow the signed API's rule: lowercase, an uppercase one refused with the name to type.
    const upper = await h.call('/admin/liquidations/list', [['market', 'BTC_USDT']]);
    assert.deepEqual([upper.code, upper.message], [3005, "market 'BTC_USDT' must be lowercase ('btc_usdt')"]);
    // The fund: 1 % of the 3,000.0625 usdt repaid, and 10 % of the 0.0625 usdt of interest paid.
    const ins = await h.call('/admin/insurance', [['coin', 'usdt']]);
    assert.deepEqual([ins.liquidations, ins.running], [1, 0]);
    assert.deepEqual(ins.coins, [
      {
        coin: 'usdt',
        available: '30.006875',
        interestShare: '0.00625',
        liquidationFees: '30.000625',
        covered: '0',
        badDebt: '0',
      },
    ]);
  });

  test('bad input is refused with a clear message and changes nothing', async () => {
    const h = await liquidated();
    const before = h.venue.engine.stateHash();
    for (const [path, form, code, message] of [
      ['/admin/liquidations/list', [['user', 'nobody']], 3004, /no user named or numbered 'nobody'/],
      ['/admin/liquidations/list', [['market', 'nope_usdt']], 3005, /unknown market 'nope_usdt'/],
      ['/admin/liquidations/list', [['status', 'open']], 3005, /status 'open' must be one of running, done/],
      ['/admin/liquidations/list', [['limit', '0']], 3005, /limit '0' must be an integer from 1/],
      ['/admin/liquidations/list', [['offset', 'x']], 3005, /offset 'x'/],
      ['/admin/liquidations/show', [], 3005, /id '' must be a liquidation number/],
      ['/admin/liquidations/show', [['id', '0']], 3005, /id '0' must be a liquidation number/],
      ['/admin/liquidations/show', [['id', '1e3']], 3005, /id '1e3'/],
      ['/admin/liquidations/show', [['id', '2']], 3005, /no liquidation 2/],
      ['/admin/insurance', [['coin', 'nocoin']], 3005, /unknown coin 'nocoin'/],
      ['/admin/insurance', [['coin', 'b@d']], 3005, /coin/],
    ] as [string, [string, string][], number, RegExp][]) {
      const r = await h.call(path, form);
      assert.equal(r.code, code, `${path} ${JSON.stringify(form)} → ${JSON.stringify(r)}`);
      assert.match(String(r.message), message);
    }
    assert.equal(h.venue.engine.stateHash(), before);
  });

  test('a liquidation the band stopped: listed as running, and the user view shows the account locked', async () => {
    const { venue, bob, carol } = await longVenue();
    await venue.must(limitOrder(bob, BUY, 2_340_000, 500)); // only 0.05 btc inside the band
    await gap(venue, bob, carol);
    const h = harness(venue);
    const running = await h.call('/admin/liquidations/list', [['status', 'running']]);
    assert.equal(running.total, 1);
    const [row] = running.liquidations as Json[];
    assert.deepEqual(
      [row?.status, row?.endTime, (row?.orders as Json[]).map((o) => o.filled)],
      ['running', 0, ['0.05000000']],
    );
    const views = viewsRoutes({ venue });
    const body = await callRoute(views, '/admin/users/show', [['user', 'alice']]);
    const isolated = (body.accounts as Json[]).find((a) => a.account === 'isolated btc_usdt');
    assert.deepEqual([isolated?.level, isolated?.repayLock], [3, true]);
    const show = (findCommand(['user', 'show', 'alice'])?.command.call?.(['alice'], new Map()) as AdminCall)
      .show;
    assert.match(
      show(body),
      /^isolated btc_usdt balances \(risk rate \d\.\d{1,4}, locked by its liquidation\):$/m,
    );
  });
});
