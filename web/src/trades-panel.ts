/**
 * @module trades-panel — the selected market's latest trades, live from `<market>_trades` (the
 * snapshot's 50, then each tick's new ones on top), colored by the taker's side.
 */
import { byId, clockTime, el, fixed, setClass, setText, type App } from './app.ts';
import { redraw } from './frame.ts';
import type { Json } from './rest.ts';

const ROWS = 30;

interface Trade {
  readonly tid: number;
  readonly price: string;
  readonly amount: string;
  /** Seconds. */
  readonly date: number;
  readonly type: 'buy' | 'sell';
}

export function tradesPanel(app: App): void {
  const list = byId('trades');
  const rows = Array.from({ length: ROWS }, () => {
    const row = el('div', 'row');
    const price = el('span');
    const amount = el('span');
    const time = el('span');
    row.append(price, amount, time);
    list.append(row);
    /** The trade shown (its id), so that an unchanged row is not touched. */
    return { price, amount, time, tid: -1 };
  });
  /** Newest first. */
  let trades: Trade[] = [];
  let unsubscribe: (() => void) | undefined;

  const render = (): void => {
    const m = app.market.value;
    rows.forEach((r, i) => {
      const t = trades[i];
      const tid = t?.tid ?? -1;
      if (r.tid === tid) return;
      r.tid = tid;
      setText(r.price, t === undefined ? '' : fixed(t.price, m.priceScale));
      setClass(r.price, t === undefined ? '' : t.type === 'buy' ? 'up' : 'down');
      setText(r.amount, t === undefined ? '' : fixed(t.amount, m.amountScale));
      setText(r.time, t === undefined ? '' : clockTime(t.date * 1000));
    });
  };

  app.market.listen((m) => {
    unsubscribe?.();
    trades = [];
    for (const r of rows) r.tid = -2;
    app.lastTrade.set(undefined);
    redraw(render);
    unsubscribe = app.feed.subscribe({ channel: `${m.wireId}_trades` }, (message: Json, snapshot) => {
      // Both the snapshot and updates list trades oldest first.
      const fresh = (message.data as Trade[]).slice().reverse();
      trades = snapshot ? fresh : [...fresh, ...trades].slice(0, ROWS);
      const newest = trades[0];
      if (newest !== undefined)
        app.lastTrade.set({ price: fixed(newest.price, m.priceScale), buy: newest.type === 'buy' });
      redraw(render);
    });
  }, true);
}
