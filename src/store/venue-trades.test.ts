import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VENUE_TRADES_COUNT_CAP } from './history-store.ts';
import { venueTrades, type RunStatement, type VenueTradesStatement } from './venue-trades.ts';

/** A table of (id, time) with gaps in the ids and runs of equal times; every statement it was asked. */
function fakeTable(rows: readonly (readonly [number, number])[], beyond: boolean) {
  const asked: { name: VenueTradesStatement; params: readonly (number | string)[] }[] = [];
  const run: RunStatement = (name, params) => {
    asked.push({ name, params });
    const at = params[0] as number;
    if (name === 'tradeLast') return Promise.resolve(rows.filter(([id]) => id <= at).slice(-1));
    if (name === 'tradeAtOrAfter') return Promise.resolve(rows.filter(([id]) => id >= at).slice(0, 1));
    if (name.startsWith('venueTradesBeyond')) return Promise.resolve(beyond ? [[1]] : []);
    if (name.startsWith('venueTradesCount')) return Promise.resolve([[3]]);
    return Promise.resolve([]);
  };
  return { run, asked };
}

test('a time range becomes an id range by a binary search of point lookups, bounded by log2 of the ids', async () => {
  // Ids 1..100,000 every third missing; time grows by one every 7 ids (non-decreasing).
  const rows: [number, number][] = [];
  for (let id = 1; id <= 100_000; id++) if (id % 3 !== 0) rows.push([id, 1_000 + Math.floor(id / 7)]);
  const { run, asked } = fakeTable(rows, false);
  const from = 5_000;
  const to = 9_000;
  const got = await venueTrades(run, { fromTime: from, toTime: to, limit: 10, offset: 0 });
  assert.deepEqual(got, { rows: [], total: 3, capped: false });
  const page = asked.find((a) => a.name === 'venueTrades:all');
  const [lo, hi] = page?.params as [number, number];
  const inRange = rows.filter(([, time]) => time >= from && time <= to).map(([id]) => id);
  assert.ok(
    lo <= (inRange[0] as number) &&
      !rows.some(([id, time]) => id >= lo && id < (inRange[0] as number) && time < from),
  );
  assert.equal(rows.filter(([id]) => id >= lo && id <= hi).length, inRange.length);
  const probes = asked.filter((a) => a.name === 'tradeAtOrAfter').length;
  assert.ok(probes <= 2 * 18, `${probes} probes for 100,000 ids`);
});

test('past the cap the total is the cap, marked capped, and nothing counts the rest', async () => {
  const { run, asked } = fakeTable([[1, 1]], true);
  const got = await venueTrades(run, { market: 'btc_usdt', limit: 25, offset: 0 });
  assert.deepEqual(got, { rows: [], total: VENUE_TRADES_COUNT_CAP, capped: true });
  assert.deepEqual(
    asked.map((a) => a.name),
    ['venueTrades:market', 'venueTradesBeyond:market'],
  );
  // Without a time range nothing is searched: the id range is everything.
  assert.deepEqual(asked[0]?.params, [0, Number.MAX_SAFE_INTEGER, 'btc_usdt', 25, 0]);
});
