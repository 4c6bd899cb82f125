/**
 * Browser test of the trading page's Report tab (issue 35): Debian's Chromium driven by
 * playwright-core against the real server with its demo. A trader who has traded opens the tab and
 * sees the report's figures and the chart of the account's value over time beside the price.
 * Screenshot: test-output/browser/trader-report.png.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  browserSkip,
  openBrowserVenue,
  reportChartPoints,
  SCREENSHOTS,
  type BrowserVenue,
} from '../fixtures/browser-venue.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { createTrader, tradeRounds, type ZbClient } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

describe("the trading page's report (issue 35)", { skip: browserSkip }, () => {
  let venue: BrowserVenue | undefined;
  let page: Page;
  let rita: ZbClient;

  before(async () => {
    venue = await openBrowserVenue('report-page', async (server) => {
      rita = await createTrader(server, 'rita', [['usdt', '10000']]);
      const seller = await createTrader(server, 'sam', [['btc', '1']]);
      await tradeRounds(rita, seller, 4);
    });
    page = venue.page;
  });

  after(async () => {
    await venue?.close();
  });

  test("the Report tab shows the account's figures and its value over time beside the price", async () => {
    const server = (venue as BrowserVenue).server;
    await page.goto(`${server.base}/#btc_usdt`);
    await page.waitForSelector('#feed-status.live');
    await page.fill('#access-key', rita.accessKey);
    await page.fill('#secret-key', rita.secret);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#user-name:has-text("rita")');
    await page.click('#account-tabs button[data-tab="report"]');
    await page.waitForSelector('#report-chart polyline.value-line');
    const figures = await page.locator('#report .report-figures').innerText();
    assert.match(figures, /Fills\s+\d+ \(\d+ buys, 0 sells\)/);
    assert.match(figures, /Turnover\s+[\d.]+ USDT/);
    assert.match(figures, /Largest drawdown/);
    const lines = await reportChartPoints(page);
    assert.equal(lines.value, lines.price, 'one point of each per moment');
    assert.match(
      (await page.locator('#report').innerText()) ?? '',
      /Account value \(USDT\)[\s\S]*BTC_USDT price/,
    );
    const box = await page.locator('#report-chart').boundingBox();
    assert.ok(
      box !== null && box.width > 200 && box.height > 60,
      `the chart is drawn: ${JSON.stringify(box)}`,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'trader-report.png') });
    assert.deepEqual((venue as BrowserVenue).problems, []);
  });
});
