/**
 * @module results — what a command returns (`ApplyResult`) and the order shapes it and the reads
 * carry. A module of its own so that the engine's modules take it from here, not from engine.ts,
 * which imports them (the type-only cycle issue 32 named).
 */
import type { Side } from '../domain/commands.ts';
import type { EngineEvent, OrderStatus } from '../domain/events.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';
import type { ResultName } from '../domain/result-codes.ts';
import type { Order } from './order-book.ts';

/** What one command did. `events` is empty when the command was refused. */
export interface ApplyResult {
  readonly result: ResultName;
  /** Detail for a refusal: which parameter or limit. */
  readonly message?: string;
  readonly events: EngineEvent[];
  readonly orderId?: number;
  readonly orderIds?: number[];
  readonly userId?: number;
  /** The command repeated a business id already applied: nothing changed. */
  readonly duplicate?: boolean;
  /** The order a cancel acted on, in its final state, for the cancelOrder reply. */
  readonly order?: CancelledOrder;
  readonly deadline?: number;
  /** The withdrawal a RequestWithdrawal created. */
  readonly withdrawalId?: string;
  /** The lending offer a PlaceLoanOffer or FundLendingPool made. */
  readonly offerId?: number;
  /** The loan records a Borrow made (one per offer it took from). */
  readonly loanIds?: number[];
}

/** What a cancel answers about the order it cancelled (the order itself: it no longer changes). */
export type CancelledOrder = Readonly<Pick<Order, 'id' | 'price' | 'amount' | 'filled' | 'filledValue'>>;

/** A read-only view of an order the engine holds. */
export interface OrderView {
  readonly id: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: Order['kind'];
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly filled: Lots;
  readonly filledValue: CoinUnits;
  readonly fees: CoinUnits;
  readonly platformFees: CoinUnits;
  readonly status: OrderStatus;
  readonly time: number;
  readonly clientOrderId: string;
  readonly acctType: Order['acctType'];
  readonly usePlatformCoin: boolean;
}
