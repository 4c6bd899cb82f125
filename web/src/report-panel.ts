/**
 * @module report-panel — the Report tab (issue 35): the signed-in account's report on the selected
 * market from the signed `getAccountReport` (a Bourse extension; docs/sandbox.md) — fills, fees,
 * realised and unrealised P&L, turnover, largest drawdown — and a chart of the account's value over
 * time beside the market's price, both on one time axis, each on its own scale.
 */
import { byId, dateTime, el, type App } from './app.ts';
import type { Json } from './rest.ts';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 200;
const PAD = { left: 70, right: 70, top: 10, bottom: 22 };

function svg(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** The polyline of `values` over `times` in the plot box, scaled to its own range. */
function line(
  times: number[],
  values: number[],
  className: string,
): { path: SVGElement; min: number; max: number } {
  const t0 = times[0] as number;
  const t1 = Math.max(times[times.length - 1] as number, t0 + 1);
  let min = Math.min(...values);
  let max = Math.max(...values);
  if (max === min) [min, max] = [min - 1, max + 1];
  const x = (t: number): number => PAD.left + ((t - t0) / (t1 - t0)) * (WIDTH - PAD.left - PAD.right);
  const y = (v: number): number => PAD.top + (1 - (v - min) / (max - min)) * (HEIGHT - PAD.top - PAD.bottom);
  const points = times.map((t, i) => `${x(t).toFixed(1)},${y(values[i] as number).toFixed(1)}`).join(' ');
  return { path: svg('polyline', { points, class: className, fill: 'none' }), min, max };
}

/** The chart of the report's series: the account's value (left scale) and the price (right scale). */
function chart(report: Json): SVGElement {
  const series = (report.series ?? []) as { time: number; value: string; price: string }[];
  const box = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, id: 'report-chart', role: 'img' });
  box.setAttribute('aria-label', `account value and ${String(report.market)} price over time`);
  if (series.length < 2) return box;
  const times = series.map((p) => p.time);
  const value = line(
    times,
    series.map((p) => Number(p.value)),
    'value-line',
  );
  const price = line(
    times,
    series.map((p) => Number(p.price)),
    'price-line',
  );
  const label = (x: number, y: number, text: string, anchor: string, className: string) => {
    const t = svg('text', { x, y, 'text-anchor': anchor, class: className });
    t.textContent = text;
    return t;
  };
  const bottom = HEIGHT - PAD.bottom;
  box.append(
    svg('rect', {
      x: PAD.left,
      y: PAD.top,
      width: WIDTH - PAD.left - PAD.right,
      height: bottom - PAD.top,
      class: 'plot',
    }),
    price.path,
    value.path,
    label(PAD.left - 4, PAD.top + 10, format(value.max), 'end', 'value-axis'),
    label(PAD.left - 4, bottom, format(value.min), 'end', 'value-axis'),
    label(WIDTH - PAD.right + 4, PAD.top + 10, format(price.max), 'start', 'price-axis'),
    label(WIDTH - PAD.right + 4, bottom, format(price.min), 'start', 'price-axis'),
    label(PAD.left, HEIGHT - 6, dateTime(times[0] as number), 'start', 'time-axis'),
    label(WIDTH - PAD.right, HEIGHT - 6, dateTime(times[times.length - 1] as number), 'end', 'time-axis'),
  );
  return box;
}

const format = (n: number): string =>
  Math.abs(n) >= 1000 ? n.toFixed(0) : n.toPrecision(6).replace(/\.?0+$/, '');

export function reportPanel(app: App): void {
  const pane = byId('report');
  const button = document.querySelector<HTMLElement>('#account-tabs button[data-tab="report"]');
  let loading = 0;
  const load = async (): Promise<void> => {
    const api = app.api.value;
    if (api === undefined || pane.closest<HTMLElement>('[data-pane]')?.hidden === true) return;
    const m = app.market.value;
    const mine = ++loading;
    try {
      const r = await api.call('getAccountReport', [['market', m.name]]);
      if (mine !== loading) return;
      const q = m.quote.toUpperCase();
      const dd = r.maxDrawdown as Json;
      const other = Object.entries((r.fees?.other ?? {}) as Record<string, string>).map(
        ([c, a]) => `, ${a} ${c.toUpperCase()}`,
      );
      const figures: [string, string][] = [
        ['Fills', `${String(r.fills)} (${String(r.buys)} buys, ${String(r.sells)} sells)`],
        ['Turnover', `${String(r.turnover)} ${q}`],
        ['Fees', `${String(r.fees?.quote)} ${q}${other.join('')}`],
        ['Realised P&L', `${String(r.realisedPnl)} ${q}`],
        ['Unrealised P&L', `${String(r.unrealisedPnl)} ${q}`],
        ['Account value', `${String(r.startValue)} → ${String(r.endValue)} ${q}`],
        ['Largest drawdown', `${String(dd?.amount)} ${q} (${String(dd?.percent)} %)`],
      ];
      const list = el('dl', 'report-figures');
      for (const [name, text] of figures) list.append(el('dt', '', name), el('dd', 'num', text));
      const legend = el('div', 'report-legend');
      legend.append(
        el('span', 'value-key', `Account value (${q})`),
        el('span', 'price-key', `${m.name.toUpperCase()} price`),
      );
      pane.replaceChildren(list, legend, chart(r));
    } catch (error) {
      if (mine === loading)
        pane.replaceChildren(el('div', 'note', `Report unavailable: ${(error as Error).message}`));
    }
  };
  button?.addEventListener('click', () => void setTimeout(() => void load(), 0));
  app.market.listen(() => void load());
  app.orderRecords.listen(({ snapshot }) => {
    if (!snapshot) void load();
  });
}
