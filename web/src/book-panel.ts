/**
 * @module book-panel — the depth ladder of the selected market with cumulative sizes. At the
 * market's tick it is the live `<market>_depth` channel (50 levels a side); with a coarser merge
 * step it shows `/data/v1/depth?merge=` (the endpoint's merged levels, at most 5 a side), fetched
 * again when the book changes, at most every MERGED_REFRESH_MS. Click a level to use its price.
 */
import { byId, el, fixed, setClass, setText, type App, type MarketInfo } from './app.ts';
import { redraw } from './frame.ts';
import { getPublic, type Json } from './rest.ts';

/** Rows shown per side. */
const ROWS = 12;
const MERGED_REFRESH_MS = 400;

type Level = [number, number];

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
  let merge = '';
  let unsubscribe: (() => void) | undefined;
  let fetchTimer: ReturnType<typeof setTimeout> | undefined;
  let fetchedAt = 0;

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
    let total = 0;
    const totals = levels.map(([, amount]) => (total += amount));
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
      setText(r.total, fixed(totals[i], m.amountScale));
      setWidth(r.bar, `${max > 0 ? Math.round(((totals[i] as number) / max) * 100) : 0}%`);
    }
  };

  const render = (): void => {
    const m = app.market.value;
    // The wire lists asks from the highest price down: the best ask is last.
    const bestAsks = asks.slice(-ROWS).reverse();
    const bestBids = bids.slice(0, ROWS);
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

  const fetchMerged = async (): Promise<void> => {
    fetchTimer = undefined;
    fetchedAt = performance.now();
    const m = app.market.value;
    const step = merge;
    const depth = await getPublic(`/data/v1/depth?market=${m.name}&size=5&merge=${step}`).catch(
      () => undefined,
    );
    if (depth?.asks === undefined || step !== merge || m !== app.market.value) return;
    asks = depth.asks as Level[];
    bids = depth.bids as Level[];
    redraw(render);
  };
  const refreshMerged = (): void => {
    if (fetchTimer !== undefined) return;
    const wait = Math.max(0, fetchedAt + MERGED_REFRESH_MS - performance.now());
    fetchTimer = setTimeout(() => void fetchMerged(), wait);
  };

  const subscribe = (): void => {
    unsubscribe?.();
    const m = app.market.value;
    asks = [];
    bids = [];
    redraw(render);
    unsubscribe = app.feed.subscribe({ channel: `${m.wireId}_depth` }, (message: Json) => {
      if (merge !== mergeEl.options[0]?.value) {
        refreshMerged();
        return;
      }
      asks = message.asks as Level[];
      bids = message.bids as Level[];
      redraw(render);
    });
  };

  app.market.listen((m) => {
    mergeEl.replaceChildren(
      ...[0, 1, 2, 3].map((k) => {
        const step = powerOfTen(k - m.priceScale);
        const option = el('option', '', step) as HTMLOptionElement;
        option.value = step;
        return option;
      }),
    );
    merge = mergeEl.value;
    subscribe();
  }, true);
  mergeEl.addEventListener('change', () => {
    merge = mergeEl.value;
    if (merge === mergeEl.options[0]?.value) subscribe();
    else void fetchMerged();
  });
  app.lastTrade.listen(() => redraw(render));
}
