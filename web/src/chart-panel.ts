/**
 * @module chart-panel — candlesticks with volume (TradingView's lightweight-charts) for the
 * selected market, in any of the interface's 13 intervals, live from `<market>_kline_<interval>`:
 * the channel's snapshot (the latest 100 candles) sets the series; each update replaces the
 * candles it carries, applied once per animation frame.
 */
import {
  CandlestickSeries,
  HistogramSeries,
  createChart,
  type CandlestickData,
  type HistogramData,
  type UTCTimestamp,
} from 'lightweight-charts';
import { byId, el, type App } from './app.ts';
import { redraw } from './frame.ts';
import type { Json } from './rest.ts';

/** The kline types of the interface, shortest first. */
export const INTERVALS = [
  '1min',
  '3min',
  '5min',
  '15min',
  '30min',
  '1hour',
  '2hour',
  '4hour',
  '6hour',
  '12hour',
  '1day',
  '3day',
  '1week',
] as const;

/**
 * Empty bars kept right of the newest candle: its time label is centred on it, and at the very
 * edge the price scale cut it off ("17:" of 17:34; a week's one candle had no readable label).
 */
const RIGHT_OFFSET_BARS = 4;
/** Intervals of a day and more label their candles with dates, not times of day. */
const DAILY = new Set(['1day', '3day', '1week']);

const UP = '#26a69a';
const DOWN = '#ef5350';

type Row = [number, number, number, number, number, number];

export function chartPanel(app: App): void {
  const container = byId('chart');
  const chart = createChart(container, {
    autoSize: true,
    layout: { background: { color: 'transparent' }, textColor: '#7d8794', attributionLogo: true },
    grid: { vertLines: { color: '#1c232c' }, horzLines: { color: '#1c232c' } },
    rightPriceScale: { borderColor: '#262d36' },
    timeScale: {
      borderColor: '#262d36',
      timeVisible: true,
      secondsVisible: false,
      rightOffset: RIGHT_OFFSET_BARS,
    },
  });
  const candles = chart.addSeries(CandlestickSeries, {
    upColor: UP,
    downColor: DOWN,
    wickUpColor: UP,
    wickDownColor: DOWN,
    borderVisible: false,
  });
  candles.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.25 } });
  const volume = chart.addSeries(HistogramSeries, {
    priceFormat: { type: 'volume' },
    priceScaleId: 'volume',
  });
  chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });

  let interval: (typeof INTERVALS)[number] = '1min';
  let unsubscribe: (() => void) | undefined;
  /** Candles to apply at the next frame, by start time; `reset` replaces the series. */
  let pending = new Map<number, Row>();
  let reset = false;
  let lastTime = 0;
  /** Candles shown, also on the container as `data-candles` (what the browser tests read). */
  let shown = 0;

  const bar = (r: Row): CandlestickData<UTCTimestamp> => ({
    time: (r[0] / 1000) as UTCTimestamp,
    open: r[1],
    high: r[2],
    low: r[3],
    close: r[4],
  });
  const vol = (r: Row): HistogramData<UTCTimestamp> => ({
    time: (r[0] / 1000) as UTCTimestamp,
    value: r[5],
    color: r[4] >= r[1] ? 'rgba(38,166,154,0.45)' : 'rgba(239,83,80,0.45)',
  });

  const render = (): void => {
    const rows = [...pending.values()].sort((a, b) => a[0] - b[0]);
    pending = new Map();
    if (reset) {
      reset = false;
      candles.setData(rows.map(bar));
      volume.setData(rows.map(vol));
      lastTime = rows.at(-1)?.[0] ?? 0;
      shown = rows.length;
      container.dataset['candles'] = String(shown);
      chart.timeScale().scrollToRealTime();
      const range = chart.timeScale().getVisibleLogicalRange();
      // Bars of room right of the newest candle (what the browser tests read).
      container.dataset['rightSpace'] = range === null ? '' : (range.to - (shown - 1)).toFixed(1);
      return;
    }
    for (const r of rows) {
      // A candle older than the newest shown is a late correction of a closed bucket.
      const historical = r[0] < lastTime;
      candles.update(bar(r), historical);
      volume.update(vol(r), historical);
      if (r[0] > lastTime) {
        lastTime = r[0];
        shown++;
      }
    }
    container.dataset['candles'] = String(shown);
  };

  const subscribe = (): void => {
    unsubscribe?.();
    const m = app.market.value;
    const { priceScale } = m;
    const timeVisible = !DAILY.has(interval);
    chart.applyOptions({ timeScale: { timeVisible } });
    container.dataset['timeVisible'] = String(timeVisible);
    candles.applyOptions({
      priceFormat: { type: 'price', precision: priceScale, minMove: 10 ** -priceScale },
    });
    pending = new Map();
    reset = true;
    redraw(render);
    unsubscribe = app.feed.subscribe(
      { channel: `${m.wireId}_kline_${interval}` },
      (message: Json, snapshot) => {
        if (snapshot) {
          pending = new Map();
          reset = true;
        }
        for (const r of message.data as Row[]) pending.set(r[0], r);
        redraw(render);
      },
    );
  };

  const toolbar = byId('intervals');
  for (const name of INTERVALS) {
    const button = el('button', name === interval ? 'active' : '', name);
    button.setAttribute('type', 'button');
    button.dataset['interval'] = name;
    button.addEventListener('click', () => {
      if (name === interval) return;
      interval = name;
      for (const b of toolbar.querySelectorAll('button')) b.classList.toggle('active', b === button);
      subscribe();
    });
    toolbar.append(button);
  }
  app.market.listen(subscribe, true);
}
