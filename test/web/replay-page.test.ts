/**
 * Browser test of the trading page following a replay (issue 35): Debian's Chromium driven by
 * playwright-core against the real server, a sandbox replaying the sample hour
 * (samples/replay/) on a speed clock. The page's last price moves through the sample's prices and
 * ends at its last, the trades panel shows it, the chart fills with the hour's candles; a trader
 * whose resting bid the history filled opens the Report tab and sees the fills and the chart of
 * the account's value beside the price. Screenshot: test-output/browser/replay-report.png.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseReplay } from '../../src/replay/load.ts';
import {
  browserSkip,
  openBrowserVenue,
  reportChartPoints,
  SCREENSHOTS,
  type BrowserVenue,
} from '../fixtures/browser-venue.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { until, untilTrue } from '../fixtures/until.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

const SAMPLE = join(import.meta.dirname, '..', '..', 'samples', 'replay', 'BTCUSDT-aggTrades-2026-01-01.csv');
const prices = parseReplay(readFileSync(SAMPLE, 'utf8'), SAMPLE).events.map((e) =>
  Number((e as { price: string }).price),
);
const samplePrices = new Set(prices);
const lastPrice = prices.at(-1) as number;

describe('the trading page follows a replay (issue 35)', { skip: browserSkip }, () => {
  let venue: BrowserVenue | undefined;
  let page: Page;
  let rita: ZbClient;

  before(async () => {
    venue = await openBrowserVenue(
      'replay-page',
      async (server) => {
        await untilTrue('the replay', () => /replay \d+: playing 742 trades/.test(server.output()));
        rita = await createTrader(server, 'rita', [['usdt', '10000']]);
        // A bid the sample trades through later in the hour (the e2e's X).
        const bid = await rita.call('order', [
          ['currency', 'btc_usdt'],
          ['tradeType', '1'],
          ['price', '93900'],
          ['amount', '0.002'],
        ]);
        assert.equal(bid.code, 1000, JSON.stringify(bid));
      },
      ['--sandbox', '--clock=speed:1', `--replay=${SAMPLE}`],
    );
    page = venue.page;
  });

  after(async () => {
    await venue?.close();
  });

  test("the ticker, trades and candles follow the replayed hour; the Report tab charts the trader's value", async (t) => {
    const server = (venue as BrowserVenue).server;
    await page.goto(`${server.base}/#btc_usdt`);
    await page.waitForSelector('#feed-status.live');
    const shownLast = async (): Promise<number> =>
      Number(await page.textContent('#markets tr[data-market="btc_usdt"] td:nth-child(2)'));
    await until('a last price', async () => ((await shownLast()) > 0 ? true : undefined), 20_000);

    const sped = await admin(server.adminBase, server.token, '/admin/clock/speed', [['speed', '250']]);
    assert.equal(sped.code, 1000, JSON.stringify(sped));
    // Watch the page while the hour plays: every last price it shows is one the sample traded at.
    const seen = new Set<number>();
    while (!/replay \d+: finished/.test(server.output())) {
      const last = await shownLast();
      assert.ok(samplePrices.has(last), `the page shows ${last}, a price the sample never traded at`);
      seen.add(last);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(seen.size >= 5, `the last price moved with the replay (${[...seen].join(', ')})`);
    await until(
      "the sample's last price on the page",
      async () => ((await shownLast()) === lastPrice ? true : undefined),
      20_000,
    );
    assert.match(
      (await page.textContent('#market-title')) ?? '',
      new RegExp(String(lastPrice).replace('.', '\\.')),
    );
    await until(
      'the newest trade at the last price',
      async () => (Number(await page.textContent('#trades .row span')) === lastPrice ? true : undefined),
      20_000,
    );
    const candles = await until(
      "the hour's candles",
      async () => {
        const n = Number((await page.getAttribute('#chart', 'data-candles')) ?? 0);
        return n >= 50 ? n : undefined;
      },
      20_000,
    );
    assert.ok(candles <= 62, `a candle a minute of the hour (${candles})`);

    await page.fill('#access-key', rita.accessKey);
    await page.fill('#secret-key', rita.secret);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#user-name:has-text("rita")');
    await page.click('#account-tabs button[data-tab="report"]');
    await page.waitForSelector('#report-chart polyline.value-line');
    const figures = await page.locator('#report .report-figures').innerText();
    assert.match(figures, /Fills\s+[1-9]\d* \([1-9]\d* buys, 0 sells\)/, 'the history filled the bid');
    assert.match(figures, /Largest drawdown/);
    const points = await reportChartPoints(page);
    // The account's value moves with every replayed trade once the bid filled: many points.
    assert.ok(points.value >= 50, `the value over the replayed hour (${points.value} points)`);
    assert.equal(points.value, points.price, 'one point of each per moment');
    // The time axis is the replayed hour's (from the trader's first bill), not 1970's.
    const axis = (await page.textContent('#report-chart')) ?? '';
    assert.match(axis, /2026-01-01 00:\d\d:\d\d[\s\S]*2026-01-01 01:0\d:\d\d/, axis);
    t.diagnostic(
      `${seen.size} last prices seen, ${candles} candles, ${points.value} value points; ${figures.replace(/\s+/g, ' ')}`,
    );
    await page.locator('#report-chart').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'replay-report.png') });
    assert.deepEqual((venue as BrowserVenue).problems, []);
  });
});
