/**
 * @module main — the trading page: loads the venue's markets and settings, opens the WebSocket
 * feed, and starts each panel. Everything comes from the public and signed APIs, as for any client.
 */
import './style.css';
import { accountPanel } from './account-panel.ts';
import { byId, Observable, type App, type Balance, type MarketInfo, type OrderRecords } from './app.ts';
import { bookPanel } from './book-panel.ts';
import { chartPanel } from './chart-panel.ts';
import { Feed } from './feed.ts';
import { fillsPanel } from './fills-panel.ts';
import { marginPanel } from './margin-panel.ts';
import { marketsPanel } from './markets-panel.ts';
import { orderForm } from './order-form.ts';
import { getPublic, KEY_REFUSED, type Json, type SignedApi } from './rest.ts';
import { reportPanel } from './report-panel.ts';
import { tradesPanel } from './trades-panel.ts';

/** How often the sandbox clock badge is refreshed (ms). */
const CLOCK_REFRESH_MS = 5_000;

async function start(): Promise<void> {
  const [markets, venue, tickers, fees] = await Promise.all([
    getPublic('/data/v1/markets'),
    getPublic('/data/v1/venueInfo'),
    getPublic('/data/v1/allTicker'),
    getPublic('/api/getFeeInfo'),
  ]);
  const infos = new Map<string, MarketInfo>();
  for (const [name, spec] of Object.entries(markets as Record<string, Json>)) {
    const [base, quote] = name.split('_') as [string, string];
    const rates = venue.markets?.[name] ?? {};
    infos.set(name, {
      name,
      wireId: name.replace('_', ''),
      base,
      quote,
      priceScale: Number(spec.priceScale),
      amountScale: Number(spec.amountScale),
      minAmount: Number(spec.minAmount),
      minSize: Number(spec.minSize),
      makerFee: String(rates.makerFee ?? '0'),
      takerFee: String(rates.takerFee ?? '0'),
    });
  }
  const first = infos.get(location.hash.slice(1)) ?? infos.values().next().value;
  if (first === undefined) throw new Error('the venue has no market');

  const notice = byId('notice');
  let noticeTimer: ReturnType<typeof setTimeout> | undefined;
  const status = byId('feed-status');
  const app: App = {
    feed: new Feed(
      `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/websocket`,
      (s) => {
        status.textContent =
          s === 'live' ? 'live' : s === 'connecting' ? 'connecting…' : 'offline: reconnecting';
        status.className = `badge ${s === 'live' ? 'live' : ''}`;
      },
      (message, code, channel) => {
        if (code === KEY_REFUSED && channel.startsWith('push_user'))
          app.keyRefused.set(app.keyRefused.value + 1);
        else app.notice(message);
      },
    ),
    markets: infos,
    coins: Object.keys(fees?.result ?? {}).map((c) => c.toLowerCase()),
    venue,
    market: new Observable<MarketInfo>(first),
    api: new Observable<SignedApi | undefined>(undefined),
    balances: new Observable<ReadonlyMap<string, Balance>>(new Map()),
    marginShown: new Observable(false),
    marginChanged: new Observable(0),
    pickedPrice: new Observable(''),
    lastTrade: new Observable<{ price: string; buy: boolean } | undefined>(undefined),
    keyRefused: new Observable(0),
    orderRecords: new Observable<OrderRecords>({ snapshot: true, records: [] }),
    notice: (text, sticky = false) => {
      notice.textContent = text;
      notice.hidden = text === '';
      if (noticeTimer !== undefined) clearTimeout(noticeTimer);
      noticeTimer = sticky ? undefined : setTimeout(() => (notice.hidden = true), 8_000);
    },
  };

  marketsPanel(app, tickers);
  chartPanel(app);
  bookPanel(app);
  tradesPanel(app);
  orderForm(app);
  accountPanel(app);
  fillsPanel(app);
  marginPanel(app);
  reportPanel(app);
  sandboxClock(venue);
}

/** A badge with the venue's time on a sandbox clock (manual, or n times real time). */
function sandboxClock(venue: Json): void {
  const mode = venue?.clock?.mode;
  if (mode !== 'manual' && mode !== 'speed') return;
  const badge = byId('clock');
  badge.hidden = false;
  badge.className = 'badge manual';
  const show = (time: number): void => {
    badge.textContent = `sandbox clock ${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  };
  show(Number(venue.clock.time));
  setInterval(() => {
    void getPublic('/data/v1/venueInfo')
      .then((v) => show(Number(v.clock.time)))
      .catch(() => undefined);
  }, CLOCK_REFRESH_MS);
}

start().catch((error: unknown) => {
  const notice = document.getElementById('notice');
  if (notice !== null) {
    notice.hidden = false;
    notice.textContent = `The page could not load the venue: ${String(error)}`;
  }
});
