/**
 * @module open-orders — resting orders per market, kept current from the applied events (the
 * engine counts them only over all markets, and a scrape must not walk every book).
 *
 * An order rests once its command is done if it is still open then; it stops resting with the
 * OrderUpdated that gives it a final status (filled, cancelled: the engine emits one whenever an
 * order leaves a book). So per batch: each OrderAccepted whose order is open once the batch is
 * applied adds one; each final OrderUpdated of an order accepted in an earlier batch takes one
 * away. `total` must equal `engine.openOrderCount` (the tests check it).
 */
import { ORDER_CANCELLED, ORDER_DONE, type EngineEvent } from '../domain/events.ts';

/** What the count needs of the engine: is an order open now. */
export interface OpenOrderLookup {
  openOrder(orderId: number): unknown;
}

export class OpenOrderCounts {
  readonly #byMarket = new Map<string, number>();
  readonly #acceptedNow = new Set<number>();

  /** Counts from the resting orders' markets (e.g. an engine snapshot's `orders`, market third). */
  constructor(markets: Iterable<string> = []) {
    for (const market of markets) this.#add(market, 1);
  }

  /** Takes one applied batch's events; `engine` is in the state after the batch. */
  apply(
    batch: readonly { readonly result: { readonly events: readonly EngineEvent[] } }[],
    engine: OpenOrderLookup,
  ): void {
    const accepted = this.#acceptedNow;
    for (const item of batch) {
      for (const event of item.result.events) {
        if (event.type === 'OrderAccepted') {
          accepted.add(event.orderId);
          if (engine.openOrder(event.orderId) !== undefined) this.#add(event.market, 1);
        } else if (
          event.type === 'OrderUpdated' &&
          (event.status === ORDER_DONE || event.status === ORDER_CANCELLED) &&
          !accepted.has(event.orderId)
        ) {
          this.#add(event.market, -1);
        }
      }
    }
    accepted.clear();
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
