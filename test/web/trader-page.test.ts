/**
 * Browser tests of the page a trader expects (issue 31): Debian's Chromium driven by playwright-core
 * against the real server with its demo. The withdraw form picks the network from the address and
 * fills its fee (a TRC20 withdrawal is accepted with its 1 usdt fee); refusals say what to do (a
 * wrong secret, an unverified address, no deposit address, an empty price); a revoked key signs
 * the page out saying why; the trader's own fills with maker or taker, cancel-all, the amount
 * slider, the depth chart, as many levels merged as unmerged, "Total" as price × amount; the
 * margin tab's loans not in an inner scroll box; the 1-week chart's labels inside the chart; and
 * the 390 px phone layout. Screenshots go to test-output/browser/trader-*.png (docs/img has copies:
 * `npm run docs:screenshots` runs this file and copies them, DOCS_COPIES).
 */
import assert from 'node:assert/strict';
import { copyFileSync, rmSync } from 'node:fs';
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
import { CHROMIUM, launchChromium } from '../fixtures/chromium.ts';
import type { ServerProcess } from '../fixtures/server-process.ts';
import { until } from '../fixtures/until.ts';
import { admin, createTrader, type ZbClient } from '../fixtures/zb-client.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PageGlobal = any;

/** Screenshots copied to docs/img when BOURSE_DOCS_SCREENSHOTS=1 (npm run docs:screenshots). */
const DOCS_COPIES: Readonly<Record<string, string>> = {
  'trader-page.png': 'trading-page.png',
  'trader-phone.png': 'trading-page-phone.png',
  'trader-fills.png': 'trading-page-fills.png',
  'trader-withdraw.png': 'trading-page-withdraw.png',
  'trader-week.png': 'trading-page-week.png',
};
const DOCS_IMG = join(import.meta.dirname, '..', '..', 'docs', 'img');

const TRC20 = `T${'1'.repeat(33)}`;
const UNVERIFIED_TRC20 = `T${'2'.repeat(33)}`;
const FUND_PASSWORD = 'fund-pass-31';

/** Waits until the element's text matches `pattern`, then returns it. */
async function seeText(page: Page, selector: string, pattern: RegExp): Promise<string> {
  return until(
    `${selector} to match ${pattern}`,
    async () => {
      const t = await page.locator(selector).innerText({ timeout: 10_000 });
      return pattern.test(t) ? t : undefined;
    },
    20_000,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; it reads ${JSON.stringify(await page.locator(selector).innerText())}`);
  });
}

/** The number of ladder rows of a side with a price. */
const levelsShown = (side: string): number =>
  [...(globalThis as PageGlobal).document.querySelectorAll(`#${side} .row span:first-of-type`)].filter(
    (s: { textContent: string }) => s.textContent !== '',
  ).length;

describe('the trading page a trader expects (issue 31)', { skip: browserSkip }, () => {
  let server: ServerProcess;
  let venue: BrowserVenue | undefined;
  let page: Page;
  let problems: string[];
  let trader: { accessKey: string; secret: string };
  let tron: ZbClient;
  let hitter: ZbClient;

  const must = async (path: string, form: [string, string][]): Promise<Record<string, unknown>> => {
    const r = await admin(server.adminBase, server.token, path, form);
    assert.equal(r.code, 1000, `${path}: ${JSON.stringify(r)}`);
    return r;
  };
  const signIn = async (accessKey: string, secret: string): Promise<void> => {
    await page.fill('#access-key', accessKey);
    await page.fill('#secret-key', secret);
    await page.click('#sign-in button[type="submit"]');
  };
  const tab = (name: string) => page.click(`#account-tabs button[data-tab="${name}"]`);

  before(async () => {
    venue = await openBrowserVenue('trader-page', async (started) => {
      server = started;
      tron = await createTrader(server, 'tron', [['usdt', '1000']], 'asset,entrust,money');
      hitter = await createTrader(server, 'hitter', [['btc', '1']]);
      await must('/admin/fund-password/set', [
        ['user', 'tron'],
        ['password', FUND_PASSWORD],
      ]);
      for (const step of ['add', 'verify']) {
        await must(`/admin/withdraw-addresses/${step}`, [
          ['user', 'tron'],
          ['coin', 'usdt'],
          ['address', TRC20],
        ]);
      }
    });
    ({ page, problems } = venue);
    trader = await demoTraderKey(server);
  });

  after(async () => {
    await venue?.close();
    if (process.env['BOURSE_DOCS_SCREENSHOTS'] === '1')
      for (const [from, to] of Object.entries(DOCS_COPIES))
        copyFileSync(join(SCREENSHOTS, from), join(DOCS_IMG, to));
  });

  test('a wrong secret says so, without the signing recipe', async () => {
    await page.goto(`${server.base}/`);
    await page.waitForSelector('#feed-status.live');
    await signIn(tron.accessKey, 'not-the-secret');
    const text = await seeText(page, '#notice', /Sign-in refused/);
    assert.match(
      text,
      /The secret does not match this API key: paste the secret shown with the key again \(code 1003\)/,
    );
    assert.doesNotMatch(text, /HMAC|sha1/);
    assert.equal(await page.isVisible('#sign-in'), true);
  });

  test('the withdraw form takes the network from the address and fills its fee: a TRC20 withdrawal is accepted', async () => {
    await signIn(tron.accessKey, tron.secret);
    await page.waitForSelector('#user-name:has-text("tron")');
    assert.equal(await page.isVisible('#notice'), false, 'the refusal is gone once signed in');
    await tab('withdraw');
    await page.selectOption('#withdraw-coin', 'usdt');
    await until('the networks are listed', async () =>
      (await page.locator('#withdraw-chain option').count()) >= 2 ? true : undefined,
    );
    // The first network (ERC20, 15 usdt) until the address says otherwise.
    assert.equal(await page.inputValue('#withdraw-chain'), 'ERC20');
    await page.fill('#withdraw-address', TRC20);
    assert.equal(await page.inputValue('#withdraw-chain'), 'TRC20');
    assert.equal(await page.inputValue('#withdraw-fee'), '1');
    assert.match((await page.textContent('#withdraw-chain-hint')) ?? '', /a TRC20 address/);
    await page.fill('#withdraw-amount', '10');
    await page.fill('#withdraw-password', FUND_PASSWORD);
    await page.click('#withdraw button[type="submit"]');
    const done = await seeText(page, '#withdraw-result', /Withdrawal \d+ submitted|code/);
    assert.match(done, /Withdrawal \d+ submitted on TRC20: 10 USDT plus the 1 fee/);
    await page.locator('.account').screenshot({ path: join(SCREENSHOTS, 'trader-withdraw.png') });

    // An address that is not verified: what to do, in English, first.
    await page.fill('#withdraw-address', UNVERIFIED_TRC20);
    await page.fill('#withdraw-password', FUND_PASSWORD);
    await page.click('#withdraw button[type="submit"]');
    const refused = await seeText(page, '#withdraw-result.error', /verified/);
    assert.match(
      refused,
      /^This address is not one of your verified withdrawal addresses\..*ask the operator/,
    );
    assert.doesNotMatch(refused, /[\u4e00-\u9fff]/, 'no Chinese');
  });

  test('the deposit tab says what to ask for, not what the operator runs', async () => {
    await tab('deposit');
    await page.selectOption('#deposit-coin', 'usdt');
    await page.click('#deposit button[type="submit"]');
    const text = await seeText(page, '#deposit-result.error', /deposit address/);
    assert.match(text, /You have no USDT deposit address yet: ask the venue's operator to create one/);
    assert.doesNotMatch(text, /bourse|address create/);
  });

  test('a revoked key signs the page out, saying why', async () => {
    await must('/admin/keys/revoke', [['key', tron.accessKey]]);
    await tab('bills');
    const text = await seeText(page, '#notice', /Signed out/);
    assert.match(text, /the venue no longer accepts this API key.*Sign in again with a current key/);
    await page.waitForSelector('#sign-in', { state: 'visible' });
    assert.equal(await page.isVisible('#signed-in'), false);
    assert.equal(
      await page.evaluate(() => (globalThis as PageGlobal).sessionStorage.getItem('bourse.session')),
      null,
    );
  });

  test('an empty price says what to do', async () => {
    await signIn(trader.accessKey, trader.secret);
    await page.waitForSelector('#user-name:has-text("demo-trader")');
    await page.fill('#order-price', '');
    await page.fill('#order-amount', '0.001');
    await page.click('#order-submit');
    assert.match(
      await seeText(page, '#order-result.error', /price/i),
      /^Enter a price in USDT, or click a price in the order book to use it\.$/,
    );
  });

  test('the book: a depth chart beside the ladder, as many levels merged as unmerged, Total = price × amount', async () => {
    await page.waitForFunction(() => {
      const c = (globalThis as PageGlobal).document.getElementById('depth-chart');
      return Number(c?.dataset.bids ?? 0) > 0 && Number(c?.dataset.asks ?? 0) > 0;
    });
    const chart = await page.locator('#depth-chart').boundingBox();
    assert.ok(chart !== null && chart.width > 200 && chart.height > 60, JSON.stringify(chart));

    const [price, amount, total] = (
      await page.locator('#bids .row').first().locator('span').allTextContents()
    ).map(Number) as [number, number, number];
    assert.ok(Math.abs(total - price * amount) < 0.01, `Total ${total} = ${price} × ${amount}`);

    await until('a merged ladder shows as many levels as the unmerged one', async () => {
      await page.selectOption('#merge', { index: 0 });
      await page.waitForTimeout(200);
      const unmerged = [await page.evaluate(levelsShown, 'bids'), await page.evaluate(levelsShown, 'asks')];
      await page.selectOption('#merge', { index: 1 });
      await page.waitForTimeout(200);
      const merged = [await page.evaluate(levelsShown, 'bids'), await page.evaluate(levelsShown, 'asks')];
      return unmerged[0]! > 5 && unmerged[1]! > 5 && merged.join() === unmerged.join() ? true : undefined;
    });
    await page.selectOption('#merge', { index: 0 });
  });

  test('the amount slider takes a share of the available balance; cancel-all cancels the market', async () => {
    await tab('open');
    await page.click('#side-buy');
    await page.selectOption('#order-type', 'postOnly');
    const bestBid = Number(await page.textContent('#bids .row:first-child span'));
    const price = (Math.floor(bestBid * 0.99 * 100) / 100).toFixed(2);
    await page.fill('#order-price', price);
    const available = Number(((await page.textContent('#order-available')) ?? '').split(' ')[0]);
    assert.ok(available > 0);
    await page.fill('#order-share', '25');
    assert.equal(await page.textContent('#order-share-text'), '25%');
    const amount = Number(await page.inputValue('#order-amount'));
    const expected = Math.floor(((available * 0.25) / Number(price)) * 1e4) / 1e4;
    assert.ok(Math.abs(amount - expected) <= 0.0001, `${amount} ≈ ${expected}`);
    // A margin account's balance is not the spot one: the slider says where it is.
    await page.selectOption('#order-account', '1');
    await page.fill('#order-share', '50');
    assert.match(await seeText(page, '#order-result.error', /slider/), /margin tab/);
    await page.selectOption('#order-account', '0');

    for (const p of [price, (Number(price) - 1).toFixed(2)]) {
      await page.fill('#order-price', p);
      await page.fill('#order-amount', '0.0010');
      await page.click('#order-submit');
      await seeText(page, '#order-result', /placed|code/);
    }
    await until('two open orders', async () =>
      (await page.locator('#open-orders tbody tr').count()) === 2 ? true : undefined,
    );
    assert.match((await page.textContent('#cancel-all')) ?? '', /Cancel all 2 BTC\/USDT/);
    page.once('dialog', (d) => void d.accept());
    await page.click('#cancel-all');
    await until('no open order', async () =>
      (await page.locator('#open-orders tbody tr').count()) === 0 ? true : undefined,
    );
    assert.equal(await page.isVisible('#cancel-all'), false);
  });

  test("the trader's fills: price, amount, fee, maker or taker", async () => {
    await tab('fills');
    // A taker fill: an IOC buy above the best ask.
    const bestAsk = Number(await page.textContent('#asks .row:last-child span'));
    await page.selectOption('#order-type', 'ioc');
    await page.fill('#order-price', (Math.ceil(bestAsk * 1.01 * 100) / 100).toFixed(2));
    await page.fill('#order-amount', '0.0010');
    await page.click('#order-submit');
    const taker = await seeText(page, '#fills tbody', /taker/);
    assert.match(taker, /buy\s+\d+\.\d{2}\s+0\.0010\s+[\d.]+\s+0\.000002 BTC\s+taker/);

    // A maker fill: a PostOnly buy inside the spread, which another user's IOC sell takes.
    const bid = Number(await page.textContent('#bids .row:first-child span'));
    const ask = Number(await page.textContent('#asks .row:last-child span'));
    const price = (bid + 0.01).toFixed(2);
    assert.ok(bid + 0.01 < ask);
    await page.selectOption('#order-type', 'postOnly');
    await page.fill('#order-price', price);
    await page.fill('#order-amount', '0.0010');
    await page.click('#order-submit');
    await seeText(page, '#order-result', /Order \d+ placed/);
    const sold = await hitter.call('order', [
      ['currency', 'btc_usdt'],
      ['tradeType', '0'],
      ['price', price],
      ['amount', '0.0010'],
      ['orderType', '2'],
    ]);
    assert.equal(sold.code, 1000, JSON.stringify(sold));
    const maker = await seeText(page, '#fills tbody', /maker/);
    assert.match(maker, /buy\s+\d+\.\d{2}\s+0\.0010\s+[\d.]+\s+0\.000002 BTC\s+maker/);
    await page.locator('.account').screenshot({ path: join(SCREENSHOTS, 'trader-fills.png') });
    await page.evaluate(() => (globalThis as PageGlobal).scrollTo(0, 0));
    await page.screenshot({ path: join(SCREENSHOTS, 'trader-page.png') });
  });

  test('the margin tab shows the loans table in the page, not in an inner scroll box', async () => {
    await tab('margin');
    await page.waitForSelector('#margin-loans', { state: 'visible' });
    const box = await page.evaluate(() => {
      const pane = (globalThis as PageGlobal).document.querySelector('[data-pane="margin"]');
      return { scroll: pane.scrollHeight as number, client: pane.clientHeight as number };
    });
    assert.ok(box.scroll <= box.client + 1, `the margin pane scrolls inside: ${JSON.stringify(box)}`);
    await tab('open');
  });

  test("the 1-week chart labels dates, with room for the newest candle's label", async () => {
    await page.click('#intervals button[data-interval="1week"]');
    await page.waitForFunction(() => {
      const c = (globalThis as PageGlobal).document.getElementById('chart');
      return Number(c?.dataset.candles ?? 0) > 0 && c?.dataset.rightSpace !== undefined;
    });
    const data = await page.evaluate(() => ({
      ...(globalThis as PageGlobal).document.getElementById('chart').dataset,
    }));
    assert.equal(data.timeVisible, 'false', 'a week is labelled by its date');
    assert.ok(Number(data.rightSpace) >= 2, `bars right of the newest: ${data.rightSpace}`);
    await page.locator('.chart-panel').screenshot({ path: join(SCREENSHOTS, 'trader-week.png') });
    await page.click('#intervals button[data-interval="1min"]');
    assert.deepEqual(problems, []);
  });

  test('at 390 px nothing scrolls sideways; the sign-in fits; chart, book and form stack', async () => {
    const { context, dir } = await launchChromium(CHROMIUM, { width: 390, height: 844 });
    try {
      const phone = await context.newPage();
      await phone.goto(`${server.base}/`);
      await phone.waitForSelector('#feed-status.live');
      await phone.waitForFunction(
        () => (globalThis as PageGlobal).document.querySelector('#bids .row span')?.textContent !== '',
      );
      const width = await phone.evaluate(
        () => (globalThis as PageGlobal).document.documentElement.scrollWidth as number,
      );
      assert.ok(width <= 390, `the page is ${width} px wide`);
      const boxes = await phone.evaluate(() => {
        const d = (globalThis as PageGlobal).document;
        const of = (selector: string) => {
          const r = d.querySelector(selector).getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
        };
        return {
          signIn: of('#sign-in'),
          chart: of('.chart-panel'),
          book: of('.book'),
          form: of('.order-form'),
        };
      });
      for (const [name, b] of Object.entries(boxes))
        assert.ok(b.left >= 0 && b.right <= 390, `${name} fits: ${JSON.stringify(b)}`);
      assert.ok(boxes.chart.bottom <= boxes.book.top, 'the book under the chart');
      assert.ok(boxes.book.bottom <= boxes.form.top, 'the form under the book');
      await phone.screenshot({ path: join(SCREENSHOTS, 'trader-phone.png') });
    } finally {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
