/**
 * @module merge-levels — the ladder's merge step applied on the page: the live depth's levels
 * grouped to a coarser price step, so that a merged ladder has as many levels as an unmerged one.
 */

export type Level = [number, number];

/**
 * Levels merged to a step of `stepTicks` ticks (10^-priceScale each), best first: a bid's price
 * rounded down to the step, an ask's up; amounts of a merged level summed.
 */
export function mergeLevels(
  levels: readonly Level[],
  stepTicks: number,
  priceScale: number,
  side: 'bid' | 'ask',
): Level[] {
  if (stepTicks <= 1) return levels.slice();
  const tick = 10 ** priceScale;
  const merged = new Map<number, number>();
  for (const [price, amount] of levels) {
    const ticks = Math.round(price * tick) / stepTicks;
    const bucket = (side === 'bid' ? Math.floor(ticks) : Math.ceil(ticks)) * stepTicks;
    merged.set(bucket, (merged.get(bucket) ?? 0) + amount);
  }
  return [...merged]
    .sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0]))
    .map(([ticks, amount]) => [ticks / tick, amount]);
}
