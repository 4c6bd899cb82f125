/**
 * @module open-orders — resting orders per market, kept current from the applied events (the
 * engine counts them only over all markets, and a scrape must not walk every book).
 *
 * Every order begins with an OrderAccepted and, if it ever stops resting (filled, cancelled by
 * its owner, an IOC remainder, self-trade prevention, the dead-man switch), ends with exactly one
 * OrderUpdated of a final status: the engine emits one whenever an order leaves a book or is done
 * before it rests. So +1 for each OrderAccepted and −1 for each final OrderUpdated leaves the
 * resting orders, with no lookup in the engine. `total` equals `engine.openOrderCount` (the tests
 * check it after batches of every size).
 */
import { ORDER_CANCELLED, ORDER_DONE, type EngineEvent } from '../domain/events.ts';

export class OpenOrderCounts {
  readonly #byMarket = new Map<string, number>();

  /** Counts from the resting orders' markets (e.g. an engine snapshot's `orders`, market third). */
  constructor(markets: Iterable<string> = []) {
    for (const market of markets) this.#add(market, 1);
  }

  /** Takes one applied batch's events. */
  apply(batch: readonly { readonly result: { readonly events: readonly EngineEvent[] } }[]): void {
    for (const item of batch) {
      for (const event of item.result.events) {
        if (event.type === 'OrderAccepted') this.#add(event.market, 1);
        else if (
          event.type === 'OrderUpdated' &&
          (event.status === ORDER_DONE || event.status === ORDER_CANCELLED)
        ) {
          this.#add(event.market, -1);
        }
      }
    }
  }

  /** Resting orders in `market`. */
  count(market: string): number {
    return this.#byMarket.get(market) ?? 0;
  }

  /** Resting orders over all markets. */
  get total(): number {
    let n = 0;
    for (const v of this.#byMarket.values()) n += v;
    return n;
  }

  #add(market: string, delta: number): void {
    this.#byMarket.set(market, (this.#byMarket.get(market) ?? 0) + delta);
  }
}
