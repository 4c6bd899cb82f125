/**
 * @module book-panel — the depth ladder of the selected market, live from the `<market>_depth`
 * channel (50 levels a side): price, amount and Total (price × amount, in the quote coin), a bar
 * by the cumulative amount, and the depth chart beside it. A coarser merge step merges those
 * levels on the page (bids rounded down to the step, asks up), so that a merged ladder shows as
 * many levels as an unmerged one (the depth endpoint's merged depth has at most 5 a side).
 * Click a level to use its price.
 */
import { byId, el, fixed, setClass, setText, type App, type MarketInfo } from './app.ts';
import { depthChart } from './depth-chart.ts';
import { redraw } from './frame.ts';
import { mergeLevels, type Level } from './merge-levels.ts';
import type { Json } from './rest.ts';

/** Rows shown per side. */
const ROWS = 12;

interface Row {
  readonly row: HTMLElement;
  readonly bar: HTMLElement;
  readonly price: HTMLElement;
  readonly amount: HTMLElement;
  readonly total: HTMLElement;
}

/** `10^exponent` as decimal text: -2 → `0.01`, 1 → `10`. */
function powerOfTen(exponent: number): string {
  return exponent < 0 ? `0.${'0'.repeat(-exponent - 1)}1` : `1${'0'.repeat(exponent)}`;
}

/** Sets a depth bar's width only when it changed. */
function setWidth(bar: HTMLElement, width: string): void {
  if (bar.style.width !== width) bar.style.width = width;
}

export function bookPanel(app: App): void {
  const asksEl = byId('asks');
  const bidsEl = byId('bids');
  const spreadEl = byId('spread');
  const mergeEl = byId<HTMLSelectElement>('merge');
  let asks: Level[] = [];
  let bids: Level[] = [];
  /** The merge step in ticks (1: unmerged). */
  let stepTicks = 1;
  let unsubscribe: (() => void) | undefined;
  const depth = depthChart(byId<HTMLCanvasElement>('depth-chart'));

  const makeRows = (parent: HTMLElement): Row[] =>
    Array.from({ length: ROWS }, () => {
      const row = el('div', 'row');
      const bar = el('div', 'bar');
      const price = el('span');
      const amount = el('span');
      const total = el('span');
      row.append(bar, price, amount, total);
      row.addEventListener('click', () => {
        if (price.textContent !== '') app.pickedPrice.set(price.textContent as string);
      });
      parent.append(row);
      return { row, bar, price, amount, total };
    });
  const askRows = makeRows(asksEl);
  const bidRows = makeRows(bidsEl);

  const fill = (rows: Row[], levels: Level[], m: MarketInfo, max: number, fromBottom: boolean): void => {
    // levels: best first. Asks are drawn best at the bottom, bids best at the top.
    let sum = 0;
    const cumulative = levels.map(([, amount]) => (sum += amount));
    for (let i = 0; i < ROWS; i++) {
      const r = rows[fromBottom ? ROWS - 1 - i : i] as Row;
      const level = levels[i];
      if (level === undefined) {
        setText(r.price, '');
        setText(r.amount, '');
        setText(r.total, '');
        setWidth(r.bar, '0%');
        continue;
      }
      setText(r.price, fixed(level[0], m.priceScale));
      setText(r.amount, fixed(level[1], m.amountScale));
      setText(r.total, fixed(level[0] * level[1], m.priceScale));
      setWidth(r.bar, `${max > 0 ? Math.round(((cumulative[i] as number) / max) * 100) : 0}%`);
    }
  };

  const render = (): void => {
    const m = app.market.value;
    // The wire lists asks from the highest price down: the best ask is last.
    const allAsks = asks.slice().reverse();
    const bestAsks = mergeLevels(allAsks, stepTicks, m.priceScale, 'ask').slice(0, ROWS);
    const bestBids = mergeLevels(bids, stepTicks, m.priceScale, 'bid').slice(0, ROWS);
    depth.draw(bids, allAsks, m);
    const sum = (ls: Level[]): number => ls.reduce((s, [, a]) => s + a, 0);
    const max = Math.max(sum(bestAsks), sum(bestBids));
    fill(askRows, bestAsks, m, max, true);
    fill(bidRows, bestBids, m, max, false);
    const ask = bestAsks[0]?.[0];
    const bid = bestBids[0]?.[0];
    const last = app.lastTrade.value;
    const spread = ask !== undefined && bid !== undefined ? `spread ${fixed(ask - bid, m.priceScale)}` : '';
    setText(spreadEl, `${last?.price ?? '–'}   ${spread}`);
    setClass(spreadEl, `spread ${last === undefined ? '' : last.buy ? 'up' : 'down'}`);
  };

  const subscribe = (): void => {
    unsubscribe?.();
    const m = app.market.value;
    asks = [];
    bids = [];
    redraw(render);
    unsubscribe = app.feed.subscribe({ channel: `${m.wireId}_depth` }, (message: Json) => {
      asks = message.asks as Level[];
      bids = message.bids as Level[];
      redraw(render);
    });
  };

  app.market.listen((m) => {
    mergeEl.replaceChildren(
      ...[0, 1, 2, 3].map((k) => {
        const option = el('option', '', powerOfTen(k - m.priceScale)) as HTMLOptionElement;
        option.value = String(10 ** k);
        return option;
      }),
    );
    stepTicks = 1;
    subscribe();
  }, true);
  mergeEl.addEventListener('change', () => {
    stepTicks = Number(mergeEl.value);
    redraw(render);
  });
  app.lastTrade.listen(() => redraw(render));
}
