/**
 * Browser tests of the operator console (issue 17): Debian's Chromium driven by playwright-core
 * against the real server with its demo market, the console at /admin on the admin listener. It
 * must load with no console errors and refuse a wrong token; the dashboard shows solvency; the
 * operator approves a withdrawal in the console and the user's record (signed getWithdrawRecord)
 * shows it approved and sent; a market halted from the console refuses orders and trades again
 * once resumed; the user's full view and the audit log show what happened. Screenshots go to
 * test-output/browser/ (gitignored); docs/img/console-*.png are copies of some.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, openBrowserVenue, SCREENSHOTS, type BrowserVenue } from '../fixtures/browser-venue.ts';
import type { ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';
import { base32Decode, totp } from '../../src/api/admin/totp.ts';

/** A TRC20 address outside the venue. */
const EXTERNAL_TRC20 = `T${'1'.repeat(33)}`;
const FUND_PASSWORD = 'fund-pass-1';
/** Above usdt's auto-approve limit (10,000): it waits for the operator. */
const BIG_WITHDRAWAL = '15000';
const REJECTED_WITHDRAWAL = '12000';
const PAGER_USERS = 30;
/** A user name no venue accepts, and no page may run. */
const HOSTILE = `<img src=x onerror="document.title='pwned'">`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('the operator console', { skip: browserSkip }, () => {
  let root: string;
  let server: ServerProcess;
  let venue: BrowserVenue | undefined;
  let page: Page;
  let whale: ZbClient;
  let problems: string[];

  const must = async (path: string, form: [string, string][]): Promise<Json> => {
    const r = await admin(server.adminBase, server.token, path, form);
    assert.equal(r.code, 1000, `${path}: ${JSON.stringify(r)}`);
    return r;
  };
  const notice = async (pattern: RegExp): Promise<void> => {
    await page.locator('#notice.ok', { hasText: pattern }).waitFor();
  };

  before(async () => {
    venue = await openBrowserVenue('console', async (started) => {
      server = started;
      whale = await createTrader(server, 'whale', [['usdt', '40000']], 'asset,entrust,money,subuser');
      // A sub-account, for the tree in the users view (issue 33).
      const sub = await whale.call('addSubUser', [
        ['subUserName', 'wdesk1'],
        ['password', 'desk-pass1'],
      ]);
      assert.equal(sub.code, 1000, JSON.stringify(sub));
      await must('/admin/fund-password/set', [
        ['user', 'whale'],
        ['password', FUND_PASSWORD],
      ]);
      for (const step of ['add', 'verify']) {
        await must(`/admin/withdraw-addresses/${step}`, [
          ['user', 'whale'],
          ['coin', 'usdt'],
          ['address', EXTERNAL_TRC20],
        ]);
      }
      // Enough users for two pages of the users view (25 a page).
      for (let i = 1; i <= PAGER_USERS; i++) {
        await must('/admin/users/create', [['name', `pager-${String(i).padStart(2, '0')}`]]);
      }
    });
    ({ root, page, problems } = venue);
  });

  after(async () => {
    await venue?.close();
  });

  test('loads with no console error; a wrong token is refused; the dashboard shows solvency', async () => {
    // The start-up log says where the console is (on the admin listener) and where the token is.
    const deadline = Date.now() + 10_000;
    let printed: RegExpExecArray | null = null;
    while (
      (printed = /operator console: (\S+) \(sign in with the token in (\S+)\)/.exec(server.output())) === null
    ) {
      assert.ok(Date.now() < deadline, `the console's address is printed:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(printed[1], `${server.adminBase}/admin`);
    assert.equal(printed[2], join(root, 'data', 'admin.token'));
    await page.goto(printed[1] as string);
    await page.waitForSelector('#sign-in');
    assert.match(
      (await page.textContent('#sign-in .note')) ?? '',
      /bourse operator add.*authenticator app.*admin\.token.*data directory.*bourse/s,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'console-sign-in.png') });
    await page.fill('#token', 'not-the-token');
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#sign-in-result.bad');
    assert.match((await page.textContent('#sign-in-result')) ?? '', /unknown operator token/);
    assert.deepEqual(problems, []);

    await page.fill('#token', server.token);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#solvency-table');
    const coins = await page.locator('#solvency-table tbody tr').count();
    assert.ok(coins >= 5, `a row a coin: ${coins}`);
    // usdt: the users' holdings are in the books; the simulated chain's wallet is read, the difference shown.
    const usdt = page.locator('#solvency-table tr[data-coin="usdt"] td');
    assert.equal(await usdt.nth(0).textContent(), 'USDT');
    assert.match((await usdt.nth(7).textContent()) ?? '', /^\d/);
    // The demo's opening credits never came on chain: the difference is shown, and why.
    assert.match((await usdt.nth(14).textContent()) ?? '', /^-\d/);
    assert.match(
      (await page.textContent('#solvency-balance')) ?? '',
      /^Books = deposited − withdrawn \+ pool funded/,
    );
    assert.match((await page.textContent('#solvency-why')) ?? '', /credited by the operator/);
    assert.equal(await page.locator('#solvency-table .diff').count(), coins);
    assert.match((await page.textContent('#venue-facts')) ?? '', /alive.*ready/s);
    assert.match((await page.textContent('#metrics-facts')) ?? '', /Commands\d/);
    // The bootstrap token signs in as the admin `admin.token`; the tab keeps the session, not the token.
    assert.equal(await page.textContent('#who'), 'admin.token (admin)');
    const stored: string = await page.evaluate(
      () => (globalThis as Json).sessionStorage.getItem('bourse.admin.session') ?? '',
    );
    assert.match(stored, /"session":"[0-9a-f]{64}"/);
    assert.ok(!stored.includes(server.token), 'the token itself is not kept');
    assert.equal(await page.evaluate(() => (globalThis as Json).localStorage.length as number), 0);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-dashboard.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });

  test('users: paged 25 at a time, searched by name', async () => {
    await page.click('nav a[data-view="users"]');
    await page.waitForSelector('#users-table');
    const range = async (): Promise<string> => (await page.textContent('#users-list .pager .range')) ?? '';
    const total = Number(/of (\d+)/.exec(await range())?.[1]);
    assert.ok(total > PAGER_USERS + 1, `the demo's users, whale and ${PAGER_USERS} more: ${total}`);
    assert.equal(await range(), `1–25 of ${total}`);
    assert.equal(await page.locator('#users-table tbody tr').count(), 25);
    await page.click('#users-list .pager button.next');
    await page.waitForFunction(
      (text) =>
        (globalThis as Json).document.querySelector('#users-list .pager .range')?.textContent === text,
      `26–${Math.min(50, total)} of ${total}`,
    );
    await page.fill('#user-search', 'PAGER-1');
    await page.click('#users-search button[type="submit"]');
    await page.waitForFunction(
      () =>
        (globalThis as Json).document.querySelector('#users-list .pager .range')?.textContent ===
        '1–10 of 10',
    );
    const names = await page.locator('#users-table tbody tr td:nth-child(2)').allTextContents();
    assert.deepEqual(
      names,
      Array.from({ length: 10 }, (_, i) => `pager-1${i}`),
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'console-users.png') });
    // The tree of sub-accounts: whose sub-account a user is.
    await page.fill('#user-search', 'wdesk1');
    await page.click('#users-search button[type="submit"]');
    await page.waitForFunction(
      () =>
        (globalThis as Json).document.querySelector('#users-list .pager .range')?.textContent === '1–1 of 1',
    );
    assert.equal(await page.textContent('#users-table tbody tr td:last-child'), 'sub of whale');
    await page.fill('#user-search', 'nobody-here');
    await page.click('#users-search button[type="submit"]');
    await page.waitForSelector('#users-table.empty');
    assert.equal(await page.textContent('#users-table'), 'No user matches.');
    assert.deepEqual(problems, []);
  });

  /** Asks for a usdt withdrawal as `whale`, through the signed API. */
  const withdraw = async (amount: string): Promise<void> => {
    const asked = await whale.call('withdraw', [
      ['currency', 'usdt'],
      ['amount', amount],
      ['fees', '1'],
      ['receiveAddr', EXTERNAL_TRC20],
      ['safePwd', FUND_PASSWORD],
    ]);
    assert.equal(asked.code, 1000, JSON.stringify(asked));
  };
  /** whale's withdrawal record `id` (the newest without one), from the signed getWithdrawRecord. */
  const record = async (id?: string): Promise<Json> => {
    const r: Json = await whale.call('getWithdrawRecord', [['currency', 'usdt']]);
    assert.equal(r.code, 1000, JSON.stringify(r));
    const list = r.message.datas.list as Json[];
    return id === undefined
      ? list.reduce((a, b) => (b.id > a.id ? b : a))
      : list.find((w) => String(w.id) === id);
  };

  test("the operator approves a withdrawal in the console; the user's record shows it approved (and one rejected, cancelled)", async () => {
    await withdraw(BIG_WITHDRAWAL);
    const before = await record();
    assert.equal(before.amount, Number(BIG_WITHDRAWAL));
    assert.ok(!before.hash, `not sent before the operator approves: ${JSON.stringify(before)}`);
    const id = String(before.id);

    await page.click('nav a[data-view="dashboard"]');
    await page.click('#refresh');
    const row = page.locator(`#pending-withdrawals tr[data-withdrawal="${id}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /whale.*15000.*submitted/);
    await row.locator('button.approve').click();
    await page.screenshot({ path: join(SCREENSHOTS, 'console-approve.png'), fullPage: true });
    await row.locator('button.yes').click();
    await notice(new RegExp(`Withdrawal ${id} approved: now (approved|sending|sent)`));
    // Still in progress (on chain), no longer waiting for the operator.
    await row.locator('td', { hasText: /^(approved|sending|sent)$/ }).waitFor();
    assert.equal(await row.locator('button.approve').count(), 0);

    // Approved, the chain watcher sent it: the user's record carries the transaction.
    const after = await record(id);
    assert.equal(String(after.id), id);
    assert.ok(after.hash, `sent on chain once approved: ${JSON.stringify(after)}`);
    assert.ok(after.manageTime >= before.submitTime);
    const steps = (await must('/admin/withdrawals/show', [['id', id]])).steps.map((s: Json) => s.status);
    assert.deepEqual(steps.slice(0, 2), ['submitted', 'approved']);
    // Confirmed on the simulated chain: the record says succeeded (2).
    await must('/admin/chain/mine', [['blocks', '25']]);
    const deadline = Date.now() + 10_000;
    let last = await record(id);
    while (last.status !== 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      last = await record(id);
    }
    assert.equal(last.status, 2, JSON.stringify(last));

    // Another, rejected in the console: the record says cancelled (3), the money is back.
    await withdraw(REJECTED_WITHDRAWAL);
    const second = String((await record()).id);
    assert.notEqual(second, id);
    await page.click('#refresh');
    const other = page.locator(`#pending-withdrawals tr[data-withdrawal="${second}"]`);
    await other.locator('button.reject').click();
    await other.locator('button.yes').click();
    await notice(new RegExp(`Withdrawal ${second} rejected: now cancelled`));
    await other.waitFor({ state: 'detached' });
    assert.equal((await record(second)).status, 3);

    // The user's full view shows both, with the balance they left.
    await page.click('nav a[data-view="users"]');
    await page.fill('#user-search', 'wha');
    await page.click('#users-search button[type="submit"]');
    await page.locator('#users-table tr[data-user] a', { hasText: 'whale' }).click();
    await page.waitForSelector('#user-name:has-text("whale")');
    const w = page.locator(`#user-withdrawals tr[data-withdrawal="${id}"]`);
    await w.waitFor();
    assert.match((await w.textContent()) ?? '', /15000.*succeeded/);
    assert.match(
      (await page.locator(`#user-withdrawals tr[data-withdrawal="${second}"]`).textContent()) ?? '',
      /12000.*cancelled/,
    );
    // 40,000 credited, 15,000 and its fee of 1 sent; the rejected 12,000 and its fee released.
    assert.equal(
      await page.textContent('#balances-spot tr[data-coin="usdt"]'),
      ['USDT', '24999', '0'].join(''),
    );
    assert.match((await page.textContent('#user-keys')) ?? '', /asset, entrust, money/);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-user.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });

  test('a market halted from the console refuses orders; resumed, it takes them again', async () => {
    const order = (): Promise<Json> =>
      whale.call('order', [
        ['currency', 'eth_usdt'],
        ['price', '10.00'],
        ['amount', '1.0000'],
        ['tradeType', '1'],
      ]);
    await page.click('nav a[data-view="markets"]');
    const row = page.locator('#markets-table tr[data-market="eth_usdt"]');
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /trading/);
    await row.locator('button.halt').click();
    await row.locator('button.yes').click();
    await notice(/eth_usdt halted/);
    await row.locator('.status.halted').waitFor();
    const refused = await order();
    assert.equal(refused.code, 1009, JSON.stringify(refused));
    await page.screenshot({ path: join(SCREENSHOTS, 'console-markets.png') });

    await row.locator('button.resume').click();
    await row.locator('button.yes').click();
    await notice(/eth_usdt resumed/);
    await row.locator('.status.trading').waitFor();
    const placed = await order();
    assert.equal(placed.code, 1000, JSON.stringify(placed));
    const cancelled = await whale.call('cancelOrder', [
      ['currency', 'eth_usdt'],
      ['id', String(placed.id)],
    ]);
    assert.equal(cancelled.code, 1000, JSON.stringify(cancelled));

    // A market added from the console is a journaled runtime change: listed at once, and it trades.
    await page.click('#add-market');
    const fields: [string, string][] = [
      ['market', 'hc_usdt'],
      ['priceScale', '2'],
      ['amountScale', '2'],
      ['minAmount', '0.01'],
      ['minSize', '1'],
      ['makerFee', '-0.0005'],
      ['takerFee', '0.001'],
    ];
    for (const [name, value] of fields) await page.fill(`#add-market-form input[name="${name}"]`, value);
    await page.click('#add-market-form button[type="submit"]');
    await notice(/hc_usdt added/);
    const added = page.locator('#markets-table tr[data-market="hc_usdt"]');
    await added.waitFor();
    assert.match((await added.textContent()) ?? '', /trading/);
    const onNew = await whale.call('order', [
      ['currency', 'hc_usdt'],
      ['price', '10.00'],
      ['amount', '1.00'],
      ['tradeType', '1'],
    ]);
    assert.equal(onNew.code, 1000, JSON.stringify(onNew));
    assert.deepEqual(problems, []);
  });

  test('the audit log lists the console’s actions, newest first, paged; what it shows is text, never markup', async () => {
    // A refused action is audited with its parameters as given: markup must show as text.
    const refused = await admin(server.adminBase, server.token, '/admin/users/create', [['name', HOSTILE]]);
    assert.equal(refused.code, 3005, JSON.stringify(refused));
    await page.click('nav a[data-view="audit"]');
    await page.waitForSelector('#audit-table');
    const actions = await page
      .locator('#audit-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => (r as Json).dataset.action as string));
    assert.deepEqual(
      actions.slice(0, 7),
      [
        'users/create',
        'markets/add',
        'markets/status',
        'markets/status',
        'withdrawals/reject',
        'chain/mine',
        'withdrawals/approve',
      ],
      actions.join(' '),
    );
    assert.match((await page.textContent('#audit-log .pager')) ?? '', /1–\d+ of \d+/);
    assert.equal(await page.textContent('#audit-table tbody tr:first-child code'), `name=${HOSTILE}`);
    assert.equal(await page.locator('#audit-table img').count(), 0);
    assert.notEqual(await page.title(), 'pwned');
    await page.screenshot({ path: join(SCREENSHOTS, 'console-audit.png') });
    // Signing out forgets the session.
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    assert.equal(
      await page.evaluate(() => (globalThis as Json).sessionStorage.getItem('bourse.admin.session')),
      null,
    );
    assert.deepEqual(problems, []);
  });

  /** Signs in on the sign-in screen with a token (and a code); waits for the dashboard. */
  const signIn = async (token: string, code = ''): Promise<void> => {
    await page.goto(`${server.adminBase}/admin`);
    await page.waitForSelector('#sign-in');
    await page.fill('#token', token);
    await page.fill('#code', code);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#solvency-table');
  };
  const open = async (hash: string, selector: string): Promise<void> => {
    // A hash the page shows already would not load it again: then it is reloaded.
    if (page.url().endsWith(`#${hash}`)) await page.reload();
    else await page.goto(`${server.adminBase}/admin#${hash}`);
    await page.waitForSelector(selector);
  };
  /** whale's usdt available and open orders, from the admin API. */
  const whaleState = async (): Promise<{ usdt: string; orders: number; status: string; keys: number }> => {
    const r = await must('/admin/users/show', [['user', 'whale']]);
    const spot = (r.accounts as Json[])[0].balances as Json[];
    return {
      usdt: spot.find((b) => b.coin === 'usdt').available,
      orders: r.openOrders.total,
      status: r.user.status,
      keys: (r.keys as Json[]).length,
    };
  };

  test("the user page acts: freeze, unfreeze, credit, cancel orders, revoke a key — each confirmed, audited under the operator's name", async () => {
    await signIn(server.token);
    await open('user/whale', '#user-actions');
    await page.click('#user-actions #freeze');
    assert.match((await page.textContent('#user-actions .question')) ?? '', /^Freeze whale\?/);
    await page.click('#user-actions .yes');
    await notice(/whale frozen/);
    await page.locator('#user-status.frozen').waitFor();
    assert.equal((await whaleState()).status, 'frozen');
    const refused = await whale.call('order', [
      ['currency', 'eth_usdt'],
      ['price', '10.00'],
      ['amount', '1.0000'],
      ['tradeType', '1'],
    ]);
    assert.notEqual(refused.code, 1000, 'a frozen user places no order');
    await page.click('#user-actions #unfreeze');
    await page.click('#user-actions .yes');
    await notice(/whale unfrozen/);
    await page.locator('#user-status.active').waitFor();

    // Credit: the amount, then a confirmation naming it; applied once.
    const before = await whaleState();
    await page.selectOption('#credit-coin', 'usdt');
    await page.fill('#credit-amount', '5');
    await page.click('#credit-form button[type="submit"]');
    assert.equal(await page.textContent('#user-actions .question'), 'Credit 5 USDT to whale?');
    await page.click('#user-actions .yes');
    await notice(/5 USDT credited to whale/);
    assert.equal(Number((await whaleState()).usdt), Number(before.usdt) + 5);

    // Cancel all orders (whale rests one on hc_usdt already).
    const resting = (await whaleState()).orders;
    for (const price of ['10.00', '11.00']) {
      const placed = await whale.call('order', [
        ['currency', 'eth_usdt'],
        ['price', price],
        ['amount', '1.0000'],
        ['tradeType', '1'],
      ]);
      assert.equal(placed.code, 1000, JSON.stringify(placed));
    }
    await open('user/whale', '#user-actions');
    const count = resting + 2;
    assert.equal((await whaleState()).orders, count);
    await page.click('#user-actions #cancel-orders');
    assert.match(
      (await page.textContent('#user-actions .question')) ?? '',
      new RegExp(`^Cancel all ${count} open orders of whale\\?`),
    );
    await page.click('#user-actions .yes');
    await notice(/orders of whale cancelled/);
    await page.waitForSelector('#user-orders .empty');
    assert.equal((await whaleState()).orders, 0);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-user.png') });

    // Revoke the key: requests signed with it fail from now on.
    const keys = (await whaleState()).keys;
    await page.locator('#user-keys tbody tr').first().locator('button.revoke').click();
    await page.click('#user-keys .yes');
    await notice(/revoked/);
    assert.equal((await whaleState()).keys, keys - 1);
    const audit = await must('/admin/audit/list', [['limit', '5']]);
    assert.deepEqual(
      (audit.entries as Json[]).map((e) => [e.operator, e.action, e.code]),
      [
        ['admin.token', 'keys/revoke', 1000],
        ['admin.token', 'users/cancel-orders', 1000],
        ['admin.token', 'deposits/credit', 1000],
        ['admin.token', 'users/unfreeze', 1000],
        ['admin.token', 'users/freeze', 1000],
      ],
    );
    assert.deepEqual(problems, []);
  });

  test('venue-wide deposits, withdrawals and trades, filtered by user, coin or market, status and time', async () => {
    await open('activity/deposits', '#activity-table');
    assert.equal(await page.textContent('nav a.active'), 'Activity');
    await page.fill('#activity-filters input[name="user"]', 'whale');
    await page.fill('#activity-filters input[name="coin"]', 'usdt');
    await page.click('#activity-filters button[type="submit"]');
    await page.waitForFunction(() => {
      const cells = [
        ...(globalThis as Json).document.querySelectorAll('#activity-table tbody td:nth-child(2)'),
      ];
      return cells.length > 0 && cells.every((c: Json) => c.textContent === 'whale');
    });
    await page.screenshot({ path: join(SCREENSHOTS, 'console-activity.png') });

    await open('activity/withdrawals', '#activity-table');
    await page.selectOption('#activity-filters select[name="status"]', 'cancelled');
    await page.click('#activity-filters button[type="submit"]');
    await page.waitForFunction(() => {
      const cells = [
        ...(globalThis as Json).document.querySelectorAll('#activity-table tbody td:nth-child(8)'),
      ];
      return cells.length > 0 && cells.every((c: Json) => c.textContent === 'cancelled');
    });
    // A time range with nothing in it.
    await page.fill('#activity-filters input[name="to"]', '2001-01-01');
    await page.click('#activity-filters button[type="submit"]');
    await page.waitForSelector('#activity-table.empty');

    await open('activity/trades', '#activity-results');
    // Every trade the store holds, not the latest 1000 of each market (the note said so before).
    await page.waitForSelector('#activity-table tbody tr');
    assert.doesNotMatch((await page.textContent('#activity-results')) ?? '', /latest 1000 trades/);
    await page.fill('#activity-filters input[name="market"]', 'BTC_USDT');
    await page.click('#activity-filters button[type="submit"]');
    await page
      .locator('#notice.bad', { hasText: "market 'BTC_USDT' must be lowercase ('btc_usdt')" })
      .waitFor();
    assert.deepEqual(problems, []);
  });

  test('an admin changes a market’s fees and closes a market from the console', async () => {
    await open('markets', '#markets-table');
    const row = page.locator('#markets-table tr[data-market="hc_usdt"]');
    await row.locator('button.fees').click();
    await row.locator('input[name="makerFee"]').fill('0.0004');
    await row.locator('input[name="takerFee"]').fill('0.0015');
    await row.locator('.fees-form button[type="submit"]').click();
    assert.equal(await row.locator('.question').textContent(), 'Maker 0.04%, taker 0.15% on hc_usdt?');
    await row.locator('button.yes').click();
    await notice(/hc_usdt fees: maker 0.04%, taker 0.15%/);
    const listed = await must('/admin/markets/list', [['market', 'hc_usdt']]);
    assert.deepEqual([listed.markets[0].makerFee, listed.markets[0].takerFee], ['0.0004', '0.0015']);

    await row.locator('button.close').click();
    assert.match((await row.locator('.question').textContent()) ?? '', /^Close hc_usdt for good\?/);
    await row.locator('button.yes').click();
    await notice(/hc_usdt closed/);
    const onClosed = await whale.call('order', [
      ['currency', 'hc_usdt'],
      ['price', '10.00'],
      ['amount', '1.00'],
      ['tradeType', '1'],
    ]);
    assert.notEqual(onClosed.code, 1000, 'a closed market takes no order');
    assert.deepEqual(problems, []);
  });

  test('named operators: a viewer sees no action; an operator signs in with its TOTP code, a wrong one refused', async () => {
    const add = async (name: string, role: string): Promise<Json> =>
      must('/admin/operators/add', [
        ['name', name],
        ['role', role],
      ]);
    const vera = await add('vera', 'viewer');
    const otto = await add('otto', 'operator');
    await page.click('#sign-out');
    await signIn(vera.token);
    assert.equal(await page.textContent('#who'), 'vera (viewer)');
    await open('user/whale', '#user-keys');
    assert.equal(await page.locator('#user-actions, button.revoke').count(), 0);
    await open('markets', '#markets-table');
    assert.equal(await page.locator('#markets-table button').count(), 0);
    assert.equal(await page.locator('#add-market').count(), 0);

    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    await page.fill('#token', otto.token);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#sign-in-result.bad');
    assert.match(
      (await page.textContent('#sign-in-result')) ?? '',
      /otto moves money: give the 6-digit code of your authenticator app too/,
    );
    await signIn(otto.token, totp(base32Decode(otto.totpSecret) as Buffer, Date.now()));
    assert.equal(await page.textContent('#who'), 'otto (operator)');
    await open('user/whale', '#user-actions #freeze');
    await open('markets', '#markets-table');
    assert.equal(await page.locator('#markets-table button.fees').count(), 0, 'fees are for admins');
    assert.ok((await page.locator('#markets-table button.halt').count()) > 0);
    assert.deepEqual(problems, []);
  });

  test('a margin account on the user page shows its debt: borrowed and interest', async () => {
    await must('/admin/lending/fund', [
      ['coin', 'usdt'],
      ['amount', '100000'],
      ['rate', '0.05'],
      ['days', '10'],
    ]);
    const debtor = await createTrader(server, 'debtor', [['usdt', '1000']], 'asset,entrust,lever');
    for (const [method, params] of [
      [
        'transferInLever',
        [
          ['coin', 'USDT'],
          ['marketName', 'BTC/USDT'],
          ['amount', '500'],
        ],
      ],
      [
        'borrow',
        [
          ['coin', 'USDT'],
          ['marketName', 'BTC/USDT'],
          ['amount', '200'],
        ],
      ],
    ] as [string, [string, string][]][]) {
      const r = await debtor.call(method, params);
      assert.equal(r.code, 1000, `${method}: ${JSON.stringify(r)}`);
    }
    await open('user/debtor', '#balances-isolated\\ btc_usdt');
    const margin = page.locator('[id="balances-isolated btc_usdt"]');
    assert.deepEqual((await margin.locator('thead th').allTextContents()).slice(0, 5), [
      'Coin',
      'Available',
      'Frozen',
      'Borrowed',
      'Interest',
    ]);
    const usdt = margin.locator('tr[data-coin="usdt"] td');
    assert.equal(await usdt.nth(3).textContent(), '200');
    assert.match((await usdt.nth(4).textContent()) ?? '', /^0(\.\d+)?$/);
    // The spot account owes nothing: no debt columns.
    assert.equal(await page.locator('#balances-spot thead th').count(), 3);
    assert.deepEqual(problems, []);
  });
});
