/**
 * Browser test of the trading page's margin tab (issue 17): Debian's Chromium driven by
 * playwright-core against the real server with its demo. The operator funds the lending pool
 * (admin API, `/admin/lending/fund`) and gives the demo trader a key with `leverPerm` (the demo's
 * own key has none); signed in with it, the trader transfers USDT to the isolated account, borrows
 * (the balance and the risk rate change), places a margin order from the form that shows in open
 * orders with its account, cancels it and repays everything; no console error on the way. The
 * screenshot goes to test-output/browser/page-margin.png (docs/img/trading-page-margin.png is a copy).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  browserSkip,
  demoTraderKey,
  openBrowserVenue,
  SCREENSHOTS,
  type BrowserVenue,
} from '../fixtures/browser-venue.ts';
import { until } from '../fixtures/until.ts';
import type { ServerProcess } from '../fixtures/server-process.ts';
import { admin } from '../fixtures/zb-client.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PageGlobal = any;

/** Waits until the element's text matches `pattern` (the page fills cells as answers arrive), then returns it. */
async function seeText(page: Page, selector: string, pattern: RegExp): Promise<string> {
  const text = await until(
    `${selector} to match ${pattern}`,
    async () => {
      const t = await page.locator(selector).innerText({ timeout: 10_000 });
      return pattern.test(t) ? t : undefined;
    },
    15_000,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; it reads ${JSON.stringify(await page.locator(selector).innerText())}`);
  });
  return text;
}

describe('the trading page: the margin tab', { skip: browserSkip }, () => {
  let server: ServerProcess;
  let venue: BrowserVenue | undefined;
  let page: Page;
  let key: { accessKey: string; secretKey: string };
  let problems: string[];

  const operator = async (path: string, form: [string, string][]): Promise<Record<string, unknown>> => {
    const r = await admin(server.adminBase, server.token, path, form);
    assert.equal(r.code, 1000, `${path}: ${JSON.stringify(r)}`);
    return r;
  };

  before(async () => {
    venue = await openBrowserVenue('margin-page', async (started) => {
      server = started;
      await demoTraderKey(server);
      await operator('/admin/lending/fund', [
        ['coin', 'usdt'],
        ['amount', '100000'],
        ['rate', '0.05'],
        ['days', '10'],
      ]);
      const created = await operator('/admin/keys/create', [
        ['user', 'demo-trader'],
        ['perms', 'asset,entrust,lever'],
      ]);
      key = { accessKey: created.accessKey as string, secretKey: created.secretKey as string };
    });
    ({ page, problems } = venue);
  });

  after(async () => {
    await venue?.close();
  });

  test('transfer, borrow, a margin order from the form, repay', async () => {
    await page.goto(`${server.base}/`);
    await page.waitForSelector('#feed-status.live');
    await page.fill('#access-key', key.accessKey);
    await page.fill('#secret-key', key.secretKey);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#user-name:has-text("demo-trader")');
    await page.click('#account-tabs button[data-tab="margin"]');
    await page.waitForSelector('#margin-lines:has-text("no isolated account yet")');
    await seeText(page, '#margin-borrow-offer', /0\.05 % a day for 10 days/);

    // Spot → isolated: 1,000 USDT, no debt, so no risk rate.
    await page.selectOption('#margin-transfer-way', 'transferInLever');
    await page.selectOption('#margin-transfer-coin', 'usdt');
    await page.fill('#margin-transfer-amount', '1000');
    await page.click('#margin-transfer button[type="submit"]');
    await page.waitForSelector('#margin-result.ok:has-text("1000 USDT transferred")');
    const usdtRow = '#margin-isolated tbody tr:nth-child(2)';
    await page.waitForFunction(() =>
      (globalThis as PageGlobal).document
        .querySelector('#margin-isolated tbody tr:nth-child(2) td:nth-child(2)')
        ?.textContent?.startsWith('1000'),
    );
    await seeText(page, '#margin-risk', /^-$/);
    await seeText(page, '#margin-lines', /opening .* liquidation/);

    // Borrow 2,000 USDT for 10 days: borrowed and interest show, the risk rate appears.
    await page.selectOption('#margin-borrow-account', 'isolated');
    await page.selectOption('#margin-borrow-coin', 'usdt');
    await page.fill('#margin-borrow-amount', '2000');
    await page.selectOption('#margin-borrow-days', '10');
    await page.click('#margin-borrow button[type="submit"]');
    await page.waitForSelector('#margin-result.ok:has-text("2000 USDT borrowed")');
    await page.waitForFunction(
      () => (globalThis as PageGlobal).document.getElementById('margin-risk')?.textContent !== '-',
    );
    await seeText(page, `${usdtRow} td:nth-child(4)`, /^2000\.0+$/);
    await seeText(page, `${usdtRow} td:nth-child(5)`, /^0\.04166/);
    await seeText(page, '#margin-risk', /^\d+\.\d{4}$/);
    const loan = page.locator('#margin-loans tbody tr').first();
    await loan.waitFor();
    assert.match(
      (await loan.innerText()) ?? '',
      /isolated BTCUSDT\s+USDT\s+2000\.0+\s+2000\.0+.*0\.05%\s+repaying/s,
    );

    // A PostOnly margin buy from the form, 5% under the best bid (the demo keeps trading, and a
    // PostOnly that would take is refused): it rests, and open orders say which account it is in.
    await page.waitForFunction(
      () =>
        Number(
          (globalThis as PageGlobal).document.querySelector('#bids .row:first-child span')?.textContent,
        ) > 0,
    );
    const bestBid = Number(await page.textContent('#bids .row:first-child span'));
    const price = (Math.floor(bestBid * 0.95 * 100) / 100).toFixed(2);
    assert.equal(await page.locator('#order-express-line').isVisible(), false, 'no auto-borrow for spot');
    await page.selectOption('#order-account', '1');
    assert.equal(await page.locator('#order-express-line').isVisible(), true);
    await page.check('#order-express');
    await page.selectOption('#order-type', 'postOnly');
    await page.fill('#order-price', price);
    await page.fill('#order-amount', '0.0100');
    await page.click('#order-submit');
    await page.waitForSelector('#order-result.ok, #order-result.error');
    const id = /Order (\d+) placed/.exec((await page.textContent('#order-result')) ?? '')?.[1];
    assert.ok(id, (await page.textContent('#order-result')) ?? '');
    await page.click('#account-tabs button[data-tab="open"]');
    const row = page.locator(`#open-orders tr[data-order="${id}"]`);
    await row.waitFor();
    assert.match((await row.innerText()) ?? '', /PostOnly.*isolated/s);
    await page.click('#account-tabs button[data-tab="margin"]');
    // The order froze its value in the isolated account.
    await page.waitForFunction(
      () =>
        Number(
          (globalThis as PageGlobal).document.querySelector(
            '#margin-isolated tbody tr:nth-child(2) td:nth-child(3)',
          )?.textContent,
        ) > 0,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'page-margin.png') });

    await page.click('#account-tabs button[data-tab="open"]');
    await row.locator('button.cancel').click();
    await row.waitFor({ state: 'detached' });
    await page.click('#account-tabs button[data-tab="margin"]');

    // Repay all of it: no debt left, the risk rate is "-" again and the loan is repaid.
    await page.selectOption('#margin-repay-account', 'isolated');
    await page.selectOption('#margin-repay-coin', 'usdt');
    await page.fill('#margin-repay-amount', '');
    await page.click('#margin-repay button[type="submit"]');
    await page.waitForSelector('#margin-result.ok:has-text("All USDT owed repaid")');
    await page.waitForFunction(
      () => (globalThis as PageGlobal).document.getElementById('margin-risk')?.textContent === '-',
    );
    await seeText(page, `${usdtRow} td:nth-child(4)`, /^0(\.0+)?$/);
    await page.waitForSelector('#margin-loans tbody tr:first-child:has-text("repaid")');

    // A refusal shows the API's message and code and changes nothing.
    await page.fill('#margin-borrow-amount', '1000000');
    await page.click('#margin-borrow button[type="submit"]');
    await page.waitForSelector('#margin-result.error:has-text("(2009)")');
    assert.deepEqual(problems, []);
  });
});
