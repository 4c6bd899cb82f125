/**
 * Browser tests of the trading page: Debian's Chromium driven by playwright-core against the real
 * server with its demo market. The page must load without console errors, fill its chart and book
 * from the demo, place a PostOnly order from the form that shows in open orders and in the book,
 * cancel it, and stay responsive while the market takes ~1,000 orders a second (long tasks are
 * measured and reported, with only a generous sanity bound). Screenshots go to
 * test-output/browser/ (gitignored).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { signedQuery } from '../../src/api/auth/sign-request.ts';
import {
  browserSkip,
  demoTraderKey,
  openBrowserVenue,
  SCREENSHOTS,
  type BrowserVenue,
} from '../fixtures/browser-venue.ts';
import type { ServerProcess } from '../fixtures/server-process.ts';
import { createTrader, TEST_USER_AGENT, type ZbClient } from '../fixtures/zb-client.ts';

/** Orders per second the load test aims at, in batches of 20 (orderMoreV2). */
const LOAD_ORDERS_PER_SECOND = 1_000;
const LOAD_SECONDS = 10;
const BATCH = 20;
/** Sanity bound only: a single task blocking the page for this long means it froze. */
const MAX_LONG_TASK_MS = 2_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// Functions run in the page (not strings: the page's Content-Security-Policy forbids evaluating
// strings). This file is type-checked without the DOM's types, so they reach the page's globals
// through `globalThis as PageGlobal`; the cast is erased, the function is sent as its source.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PageGlobal = any;

/** Counts long tasks and animation frames from the first byte of the page on. */
function measureInPage(): void {
  const w = globalThis as PageGlobal;
  w.longTasks = [];
  w.frameTimes = [];
  new w.PerformanceObserver((list: { getEntries(): { startTime: number; duration: number }[] }) => {
    for (const e of list.getEntries()) w.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  const frame = (t: number): void => {
    w.frameTimes.push(t);
    w.requestAnimationFrame(frame);
  };
  w.requestAnimationFrame(frame);
}

const chartHasCandles = (): boolean =>
  Number((globalThis as PageGlobal).document.getElementById('chart')?.dataset.candles ?? 0) > 0;

function panelsFilled(): boolean {
  const d = (globalThis as PageGlobal).document;
  return (
    Number(d.getElementById('chart')?.dataset.candles ?? 0) > 0 &&
    d.querySelector('#asks .row:last-child span')?.textContent !== '' &&
    d.querySelector('#bids .row:first-child span')?.textContent !== '' &&
    d.querySelector('#trades .row span')?.textContent !== ''
  );
}

/** Long tasks and frames between two page times (ms). */
function measureBetween([from, to]: [number, number]): Measured {
  const w = globalThis as PageGlobal;
  const tasks = (w.longTasks as { start: number; duration: number }[]).filter(
    (e) => e.start >= from && e.start <= to,
  );
  const frames = (w.frameTimes as number[]).filter((f) => f >= from && f <= to);
  return {
    longTasks: tasks.length,
    longTaskTotalMs: Math.round(tasks.reduce((s, e) => s + e.duration, 0)),
    longTaskMaxMs: Math.round(Math.max(0, ...tasks.map((e) => e.duration))),
    framesPerSecond: Math.round((frames.length * 1000) / (to - from)),
  };
}

interface Measured {
  readonly longTasks: number;
  readonly longTaskTotalMs: number;
  readonly longTaskMaxMs: number;
  readonly framesPerSecond: number;
}

describe('the trading page', { skip: browserSkip }, () => {
  let server: ServerProcess;
  let venue: BrowserVenue | undefined;
  let page: Page;
  let trader: { accessKey: string; secret: string };
  let problems: string[];

  before(async () => {
    venue = await openBrowserVenue('page');
    ({ server, page, problems } = venue);
    trader = await demoTraderKey(server);
    await page.addInitScript(measureInPage);
  });

  after(async () => {
    await venue?.close();
  });

  test('loads with no console error; the chart, book and trades fill from the demo', async () => {
    await page.goto(`${server.base}/`);
    await page.waitForSelector('#feed-status.live');
    assert.equal(await page.locator('#markets tbody tr').count(), 5);
    await page.waitForFunction(panelsFilled, undefined, { timeout: 30_000 });
    // Every interval's channel answers; back to 1min.
    for (const interval of ['5min', '1hour', '1min']) {
      await page.click(`#intervals button[data-interval="${interval}"]`);
      await page.waitForFunction(chartHasCandles);
    }
    await sleep(1_000);
    await page.screenshot({ path: join(SCREENSHOTS, 'page-live.png') });
    assert.deepEqual(problems, []);
  });

  test('a PostOnly order from the form shows in open orders and in the book; cancelling removes it', async () => {
    await page.fill('#access-key', trader.accessKey);
    await page.fill('#secret-key', trader.secret);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#user-name:has-text("demo-trader")');
    const stored: string = await page.evaluate(
      () => (globalThis as PageGlobal).sessionStorage.getItem('bourse.session') ?? '',
    );
    assert.doesNotMatch(stored, new RegExp(trader.secret), 'the secret itself is not kept');
    assert.equal(
      await page.evaluate(() => (globalThis as PageGlobal).localStorage.length as number),
      0,
      'nothing in localStorage',
    );

    // Below the makers' best bid by half a percent: out of the takers' reach (0.3%), inside the ladder.
    const bestBid = Number(await page.textContent('#bids .row:first-child span'));
    const price = (Math.floor(bestBid * 0.995 * 100) / 100).toFixed(2);
    await page.selectOption('#order-type', 'postOnly');
    await page.fill('#order-price', price);
    await page.fill('#order-amount', '0.0100');
    assert.match((await page.textContent('#order-fee')) ?? '', /0\.00002 BTC \(maker 0\.2%\)/);
    await page.click('#order-submit');
    await page.waitForSelector('#order-result.ok');
    const id = /Order (\d+) placed/.exec((await page.textContent('#order-result')) ?? '')?.[1];
    assert.ok(id, (await page.textContent('#order-result')) ?? '');
    const row = page.locator(`#open-orders tr[data-order="${id}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(`PostOnly.*${price.replace('.', '\\.')}`));
    const level = page.locator('#bids .row', { has: page.locator(`span:text-is("${price}")`) });
    await level.waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'page-order.png') });

    await row.locator('button.cancel').click();
    await row.waitFor({ state: 'detached' });
    await level.waitFor({ state: 'detached' });
    assert.deepEqual(problems, []);
  });

  test('stays responsive while the market takes ~1,000 orders a second', async (t) => {
    const [buyer, seller] = await Promise.all([
      createTrader(server, 'load-buyer', [['usdt', '5000000']]),
      createTrader(server, 'load-seller', [['btc', '100']]),
    ]);
    const bestBid = Number(await page.textContent('#bids .row:first-child span'));
    const bestAsk = Number(await page.textContent('#asks .row:last-child span'));
    // Inside the spread: the buyers' batch rests, the sellers' batch trades with it.
    const price = ((bestBid + bestAsk) / 2).toFixed(2);
    const batch = JSON.stringify(Array.from({ length: BATCH }, () => [price, '0.0010']));
    const send = async (client: ZbClient, side: string): Promise<number> => {
      const query = signedQuery(
        'orderMoreV2',
        [
          ['market', 'btc_usdt'],
          ['tradeParams', batch],
          ['tradeType', side],
        ],
        client.accessKey,
        client.secret,
      );
      const reply = await fetch(`${server.base}/api/orderMoreV2?${query}`, {
        headers: { 'user-agent': TEST_USER_AGENT },
      });
      const body = (await reply.json()) as { code: number; data?: unknown[] };
      return body.code === 1000 ? (body.data?.length ?? 0) : 0;
    };

    const start: number = await page.evaluate(() => (globalThis as PageGlobal).performance.now());
    const started = performance.now();
    let accepted = 0;
    const inFlight: Promise<void>[] = [];
    const perSecond = LOAD_ORDERS_PER_SECOND / BATCH;
    for (let i = 0; i < LOAD_SECONDS * perSecond; i++) {
      const due = started + (i * 1_000) / perSecond;
      await sleep(Math.max(0, due - performance.now()));
      inFlight.push(
        send(i % 2 === 0 ? buyer : seller, i % 2 === 0 ? '1' : '0').then((n) => {
          accepted += n;
        }),
      );
      if (i === Math.floor((LOAD_SECONDS * perSecond) / 2))
        await page.screenshot({ path: join(SCREENSHOTS, 'page-load.png') });
    }
    await Promise.all(inFlight);
    const seconds = (performance.now() - started) / 1_000;
    const end: number = await page.evaluate(() => (globalThis as PageGlobal).performance.now());
    const measured = await page.evaluate(measureBetween, [start, end] as [number, number]);
    const figures = {
      ordersPerSecond: Math.round(accepted / seconds),
      seconds: Number(seconds.toFixed(1)),
      ...measured,
      machine: 'shared 2-core machine, headless Chromium, server and demo in the same machine',
    };
    writeFileSync(join(SCREENSHOTS, 'long-tasks.json'), `${JSON.stringify(figures, null, 2)}\n`);
    t.diagnostic(`load: ${JSON.stringify(figures)}`);
    assert.ok(
      figures.ordersPerSecond > LOAD_ORDERS_PER_SECOND / 2,
      `the load ran: ${JSON.stringify(figures)}`,
    );
    assert.ok(
      measured.longTaskMaxMs < MAX_LONG_TASK_MS,
      `no task froze the page: ${JSON.stringify(figures)}`,
    );
    // Still live and usable: an interval switch gets its snapshot.
    await page.click('#intervals button[data-interval="3min"]');
    await page.waitForFunction(chartHasCandles);
    assert.equal(await page.textContent('#feed-status'), 'live');
    assert.deepEqual(problems, []);
  });
});
