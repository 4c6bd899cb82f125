/**
 * @module markets-panel — every market with its last price and 24 h change, live from the
 * `<market>_ticker` channels; a click selects the market. The header shows the selected one.
 */
import { byId, el, fixed, setClass, setText, type App, type MarketInfo } from './app.ts';
import { redraw } from './frame.ts';
import type { Json } from './rest.ts';

interface Ticker {
  readonly last: string;
  readonly riseRate: string;
  readonly high: string;
  readonly low: string;
  readonly vol: string;
}

export function marketsPanel(app: App, initial: Json): void {
  const tickers = new Map<string, Ticker>();
  const rows = new Map<string, { row: HTMLElement; last: HTMLElement; change: HTMLElement }>();
  const body = byId('markets').querySelector('tbody') as HTMLElement;
  const title = byId('market-title');

  for (const m of app.markets.values()) {
    const row = el('tr');
    row.dataset['market'] = m.name;
    const name = el('td', '', `${m.base.toUpperCase()}/${m.quote.toUpperCase()}`);
    const last = el('td', 'num');
    const change = el('td', 'num');
    row.append(name, last, change);
    row.addEventListener('click', () => select(app, m));
    body.append(row);
    rows.set(m.name, { row, last, change });
    const t = initial?.[m.wireId];
    if (t !== undefined) tickers.set(m.name, t as Ticker);
  }

  const render = (): void => {
    for (const [name, r] of rows) {
      const m = app.markets.get(name) as MarketInfo;
      const t = tickers.get(name);
      setText(r.last, t === undefined ? '–' : fixed(t.last, m.priceScale));
      const rate = Number(t?.riseRate ?? 0);
      setText(r.change, `${rate > 0 ? '+' : ''}${rate.toFixed(2)}%`);
      setClass(r.change, `num ${rate > 0 ? 'up' : rate < 0 ? 'down' : ''}`);
      r.row.classList.toggle('selected', name === app.market.value.name);
    }
    const m = app.market.value;
    const t = tickers.get(m.name);
    setText(
      title,
      `${m.base.toUpperCase()}/${m.quote.toUpperCase()}` +
        (t === undefined
          ? ''
          : `   ${fixed(t.last, m.priceScale)}   ${Number(t.riseRate) > 0 ? '+' : ''}${t.riseRate}%   ` +
            `H ${fixed(t.high, m.priceScale)}  L ${fixed(t.low, m.priceScale)}  Vol ${t.vol} ${m.base.toUpperCase()}`),
    );
  };

  for (const m of app.markets.values()) {
    app.feed.subscribe({ channel: `${m.wireId}_ticker` }, (message: Json) => {
      tickers.set(m.name, message.ticker as Ticker);
      redraw(render);
    });
  }
  app.market.listen(() => redraw(render), true);
}

/** Selects a market: the panels follow, and the address remembers it. */
export function select(app: App, m: MarketInfo): void {
  if (app.market.value.name === m.name) return;
  history.replaceState(null, '', `#${m.name}`);
  app.market.set(m);
}
