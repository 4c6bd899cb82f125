/**
 * @module seed-market-data — the market data and live klines of a venue's engine, seeded from
 * its history store (the last 24 h of 1-minute buckets and the recent trades per market; the
 * latest candles per market and interval). The venue starts them after recovery
 * (src/main.ts); a hot standby starts them before it leads (src/cluster/ready-to-lead.ts).
 * Each then takes the applied batches that follow: `apply`.
 */
import type { VenueState } from '../../sequencer/venue-ports.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import { LiveKlines } from './live-klines.ts';
import { MarketData, type AppliedItem } from './market-data.ts';

export interface SeededMarketData {
  readonly marketData: MarketData;
  readonly klines: LiveKlines;
  /** Takes one applied batch into both. */
  readonly apply: (batch: readonly AppliedItem[]) => void;
}

export async function seedMarketData(
  engine: VenueState,
  history: HistoryStore,
  now: () => number,
): Promise<SeededMarketData> {
  const marketData = new MarketData(engine, { now });
  await marketData.seed(history);
  const klines = new LiveKlines();
  await klines.seed(
    history,
    engine.markets().map((m) => m.name),
  );
  return {
    marketData,
    klines,
    apply: (batch) => {
      marketData.apply(batch);
      klines.apply(batch);
    },
  };
}
