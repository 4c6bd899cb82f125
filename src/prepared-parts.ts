/**
 * @module prepared-parts — the parts of a venue a hot standby opens while it stands by
 * (src/cluster/ready-to-lead.ts) and hands to `startVenue` when it takes the lease, so that a
 * takeover is the lease, the fence and the journal's tail (issue 30); the venue that takes them
 * closes them.
 */
import type { SeededMarketData } from './api/market-data/seed-market-data.ts';
import type { VenueRateLimiter } from './config/adapters.ts';
import type { ClockSetting } from './config/options.ts';
import type { HistoryStore } from './store/history-store.ts';

/** What a standby opened before it leads (the module comment). */
export interface PreparedParts {
  /** The history store, open for reads. */
  readonly history: HistoryStore;
  /** The rate limiter (connected to Redis with --limits-url), undefined with --rate-limits=false. */
  readonly rateLimiter: VenueRateLimiter | undefined;
  /**
   * Market data and live klines of `startFrom`'s engine, seeded and fed up to its seq (on the
   * wall clock only: under --clock=manual the venue's time is known only after recovery).
   */
  readonly market: SeededMarketData | undefined;
}

/**
 * The market data a standby seeded and kept current, when the venue may take them: not while it
 * rebuilds history (they would count the rebuilt trades twice) and only on the wall clock.
 */
export function usableMarket(
  prepared: PreparedParts | undefined,
  rebuildHistory: boolean,
  clock: ClockSetting,
): SeededMarketData | undefined {
  return prepared?.market !== undefined && !rebuildHistory && clock === 'real' ? prepared.market : undefined;
}
