/**
 * @module fills-panel — the signed-in trader's own fills in the selected market: time, side,
 * price, amount, fee and whether the order was maker or taker. The interface has no query of a
 * user's fills (its order lists carry an order's totals only), so the list is made from
 * `push_user_incr_record` while the page is open: each change of an order carries its latest
 * fill (trade id, price, amount, time) and the order's fee so far, whose growth is that fill's fee.
 */
import { byId, dateTime, el, fixed, type App, type MarketInfo } from './app.ts';
import { format, mul, parseDec } from './decimal.ts';
import { FillTracker, type Fill } from './fills.ts';
import { redraw } from './frame.ts';

/** Fills kept, newest first. */
const MAX_FILLS = 100;

export function fillsPanel(app: App): void {
  const body = byId('fills').querySelector('tbody') as HTMLElement;
  const tracker = new FillTracker();
  let fills: Fill[] = [];

  const render = (): void => {
    const m = app.market.value;
    body.replaceChildren(
      ...fills.map((f) => {
        const tr = el('tr');
        tr.dataset['trade'] = String(f.tradeId);
        const feeCoin = (f.buy ? m.base : m.quote).toUpperCase();
        const cells: [string, string][] = [
          [dateTime(f.time), ''],
          [f.buy ? 'buy' : 'sell', f.buy ? 'up' : 'down'],
          [fixed(f.price, m.priceScale), 'num'],
          [fixed(f.amount, m.amountScale), 'num'],
          [total(f, m), 'num'],
          [`${trimNumber(f.fee)} ${feeCoin}`, 'num'],
          [f.role, ''],
        ];
        for (const [text, className] of cells) tr.append(el('td', className, text));
        return tr;
      }),
    );
  };

  const reset = (): void => {
    fills = [];
    tracker.baseline([]);
    redraw(render);
  };
  app.market.listen(reset);
  app.api.listen(reset);
  app.orderRecords.listen(({ snapshot, records }) => {
    if (snapshot) return tracker.baseline(records);
    const m = app.market.value;
    for (const r of records) {
      const fill = tracker.fillOf(r, m);
      if (fill !== undefined) fills = [fill, ...fills].slice(0, MAX_FILLS);
    }
    redraw(render);
  });
}

/** Total: price × amount, in the quote coin (what "Total" means everywhere on the page). */
function total(f: Fill, m: MarketInfo): string {
  const p = parseDec(fixed(f.price, m.priceScale));
  const a = parseDec(fixed(f.amount, m.amountScale));
  if (p === undefined || a === undefined) return '–';
  const text = format(mul(p, a));
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** A number without float noise or trailing zeros. */
function trimNumber(n: number, decimals = 8): string {
  const text = n.toFixed(decimals);
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
