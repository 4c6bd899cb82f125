/**
 * @module ready-to-lead — what a hot standby opens while it stands by, so that a takeover is the
 * lease, the fence and the journal's tail only (docs/scale-out.md, "Hot standby and failover";
 * issue 30): the history store (for reads), the rate limiter (its Redis connection), and the
 * market data and live klines of the standby's engine, seeded from the history store and fed
 * every batch its replica applies. The venue that takes over (src/main.ts, `prepared`) uses
 * them instead of opening them after the lease; a standby that stops without leading closes
 * them (`close`).
 *
 * The seed and the replica meet without counting a trade twice: the batches the replica applies
 * while the seed reads are held, and then only the commands after the history store's
 * checkpoint (read once the seed has read everything) are applied. A history store behind the
 * replica (a `bourse history` process lagging) leaves the trades in between out of the 24 h
 * window and the recent trades, as a venue started after it would.
 */
import { openRateLimiter, type VenueRateLimiter } from '../api/auth/open-rate-limiter.ts';
import type { ServerOptions } from '../config/options.ts';
import { dataPaths } from '../config/data-dir.ts';
import { seedMarketData, type SeededMarketData } from '../api/market-data/seed-market-data.ts';
import type { PreparedParts } from '../prepared-parts.ts';
import type { Log } from '../domain/log.ts';
import type { AppliedCommand, AppliedListener } from '../sequencer/sequencer.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import { historyLocation, openHistoryStore, readerLocation } from '../store/history-location.ts';

/** The replica the standby follows: its engine, and its applied feed from the next seq on. */
export interface FollowedReplica {
  readonly state: VenueState;
  readonly appliedSeq: number;
  subscribe(fromSeq: number, listener: AppliedListener): void;
}

export class ReadyToLead {
  readonly parts: PreparedParts;
  #handedOver = false;

  private constructor(parts: PreparedParts) {
    this.parts = parts;
  }

  /** Opens the stores and seeds the market data of `replica`'s engine. */
  static async open(options: ServerOptions, log: Log, replica: FollowedReplica): Promise<ReadyToLead> {
    const paths = dataPaths(options.dataDir);
    const historyLog = log.child({ component: 'history' });
    const history = await openHistoryStore(
      readerLocation(historyLocation(options.historyUrl, paths.history)),
      (m) => historyLog.warn(m),
    );
    let rateLimiter: VenueRateLimiter | undefined;
    try {
      rateLimiter = await openRateLimiter(options, log.child({ component: 'auth' }));
      let market: SeededMarketData | undefined;
      if (options.clock === 'real') {
        // Held while the seed reads: applied once it is known what the store already holds.
        let held: AppliedCommand[] | undefined = [];
        let seeded: SeededMarketData | undefined = undefined;
        replica.subscribe(replica.appliedSeq + 1, (batch) => {
          if (held !== undefined) held.push(...batch);
          else seeded?.apply(batch);
        });
        seeded = await seedMarketData(replica.state, history, Date.now);
        const after = await history.checkpoint();
        seeded.apply(held.filter((c) => c.command.seq > after));
        held = undefined;
        market = seeded;
      }
      return new ReadyToLead({ history, rateLimiter, market });
    } catch (error) {
      await rateLimiter?.close().catch(() => undefined);
      await history.close().catch(() => undefined);
      throw error;
    }
  }

  /** The parts, for the venue that takes over: it closes them from then on. */
  handOver(): PreparedParts {
    this.#handedOver = true;
    return this.parts;
  }

  /** Closes the parts unless they were handed over (a standby stopped without leading). */
  async close(): Promise<void> {
    if (this.#handedOver) return;
    this.#handedOver = true;
    await this.parts.rateLimiter?.close();
    await this.parts.history.close();
  }
}
