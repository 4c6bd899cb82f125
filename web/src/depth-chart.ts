/**
 * @module depth-chart — the book's cumulative depth as a chart beside the ladder: bids (green)
 * step down to the left of the spread, asks (red) up to the right, each step a level of the live
 * depth (unmerged), with the price at each edge and in the middle. Drawn on a canvas at the
 * device's pixel ratio, at most once a frame (the book panel calls it from its own redraw).
 */
import type { MarketInfo } from './app.ts';

type Level = readonly [number, number];

const UP = '#26a69a';
const DOWN = '#ef5350';
const TEXT = '#7d8794';
const FONT = '11px system-ui, sans-serif';
/** Space kept under the steps for the price labels (CSS px). */
const LABEL_HEIGHT = 16;

export interface DepthChart {
  /** `bids` best (highest) first, `asks` best (lowest) first. */
  draw(bids: readonly Level[], asks: readonly Level[], m: MarketInfo): void;
}

export function depthChart(canvas: HTMLCanvasElement): DepthChart {
  const context = canvas.getContext('2d');
  let last: [readonly Level[], readonly Level[], MarketInfo] | undefined;
  new ResizeObserver(() => {
    if (last !== undefined) draw(...last);
  }).observe(canvas);

  const draw = (bids: readonly Level[], asks: readonly Level[], m: MarketInfo): void => {
    last = [bids, asks, m];
    canvas.dataset['bids'] = String(bids.length);
    canvas.dataset['asks'] = String(asks.length);
    if (context === null) return;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) return;
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, height);
    const bestBid = bids[0]?.[0];
    const bestAsk = asks[0]?.[0];
    if (bestBid === undefined || bestAsk === undefined) return;
    const mid = (bestBid + bestAsk) / 2;
    // Symmetric about the middle, wide enough for the farther side's deepest level.
    const reach = Math.max(mid - (bids.at(-1)?.[0] ?? bestBid), (asks.at(-1)?.[0] ?? bestAsk) - mid, 1e-9);
    const low = mid - reach;
    const high = mid + reach;
    const sum = (ls: readonly Level[]): number => ls.reduce((s, [, a]) => s + a, 0);
    const top = Math.max(sum(bids), sum(asks)) * 1.1;
    const plotHeight = height - LABEL_HEIGHT;
    const x = (price: number): number => ((price - low) / (high - low)) * width;
    const y = (amount: number): number => plotHeight - (amount / top) * plotHeight;

    const side = (levels: readonly Level[], color: string, edge: number): void => {
      context.beginPath();
      let cumulative = 0;
      context.moveTo(x(levels[0]?.[0] ?? mid), plotHeight);
      for (const [price, amount] of levels) {
        context.lineTo(x(price), y(cumulative));
        cumulative += amount;
        context.lineTo(x(price), y(cumulative));
      }
      context.lineTo(edge, y(cumulative));
      context.strokeStyle = color;
      context.lineWidth = 1.5;
      context.stroke();
      context.lineTo(edge, plotHeight);
      context.closePath();
      context.globalAlpha = 0.18;
      context.fillStyle = color;
      context.fill();
      context.globalAlpha = 1;
    };
    side(bids, UP, 0);
    side(asks, DOWN, width);

    context.font = FONT;
    context.fillStyle = TEXT;
    context.textBaseline = 'bottom';
    const label = (text: string, at: number, align: CanvasTextAlign): void => {
      context.textAlign = align;
      context.fillText(text, at, height - 2);
    };
    label(low.toFixed(m.priceScale), 2, 'left');
    label(mid.toFixed(m.priceScale), width / 2, 'center');
    label(high.toFixed(m.priceScale), width - 2, 'right');
  };
  return { draw };
}
