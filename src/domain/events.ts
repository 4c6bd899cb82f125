/**
 * @module events — the engine's output vocabulary: what happened, in past tense.
 *
 * Events are emitted after the state change they describe is complete, in the order the engine
 * made the changes. For one PlaceOrder the order is:
 *   OrderAccepted → BalanceChanged (freeze) →
 *   for each fill: TradeExecuted → BalanceChanged × (4..8) → OrderUpdated (maker) →
 *   [BalanceChanged (release of a cancelled remainder)] → OrderUpdated (taker, final state of this command).
 * A rejected command emits nothing and changes nothing.
 */
import type { AcctType, OrderKind, Side } from './commands.ts';
import type { CoinUnits, Lots, PriceTicks } from './money.ts';
import type { CoinSpec, MarketSpec, MarketStatus } from './specs.ts';

/** Order status, as the interface numbers it. */
export const ORDER_PENDING = 0;
export const ORDER_CANCELLED = 1;
/** Completed, or cancelled after a partial fill. */
export const ORDER_DONE = 2;
/** Partly filled, remainder resting. */
export const ORDER_PARTIAL = 3;
export type OrderStatus =
  typeof ORDER_PENDING | typeof ORDER_CANCELLED | typeof ORDER_DONE | typeof ORDER_PARTIAL;

/** The interface's order type code: 0/1 limit, 2/3 PostOnly, 4/5 IOC (odd = buy). */
export function orderTypeCode(kind: OrderKind, side: Side): number {
  const base = kind === 'limit' ? 0 : kind === 'postOnly' ? 2 : 4;
  return base + side;
}

/** Why an order was cancelled. */
export type CancelReason = 'user' | 'ioc' | 'selfTrade' | 'deadman';

/** Why a balance changed: the bill type. A change of 0 in total (freeze, release) is no bill. */
export type BillType =
  'deposit' | 'withdraw' | 'withdrawFee' | 'buy' | 'sell' | 'buyFee' | 'sellFee' | 'freeze' | 'unfreeze';

export interface OrderAccepted {
  readonly type: 'OrderAccepted';
  readonly orderId: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly acctType: AcctType;
  readonly clientOrderId: string;
  readonly usePlatformCoin: boolean;
  readonly time: number;
}

export interface TradeExecuted {
  readonly type: 'TradeExecuted';
  readonly tradeId: number;
  readonly market: string;
  readonly price: PriceTicks;
  readonly amount: Lots;
  /** price × amount, in quote coin units. */
  readonly value: CoinUnits;
  /** The taker's side: BUY means the trade lifted an ask. */
  readonly takerSide: Side;
  readonly takerOrderId: number;
  readonly makerOrderId: number;
  readonly takerUserId: number;
  readonly makerUserId: number;
  /** Fee in `takerFeeCoin` units, and likewise for the maker. */
  readonly takerFee: CoinUnits;
  readonly takerFeeCoin: string;
  readonly makerFee: CoinUnits;
  readonly makerFeeCoin: string;
  readonly time: number;
}

/** The mutable state of an order after a change (fill or cancel). */
export interface OrderUpdated {
  readonly type: 'OrderUpdated';
  readonly orderId: number;
  readonly userId: number;
  readonly market: string;
  readonly status: OrderStatus;
  readonly filled: Lots;
  /** Σ price × amount of the fills, in quote coin units. */
  readonly filledValue: CoinUnits;
  /** Fees paid in the received coin. */
  readonly fees: CoinUnits;
  /** Fees paid in the platform coin. */
  readonly platformFees: CoinUnits;
  readonly cancelReason: CancelReason | null;
  /** The latest trade of the order (0 when none). */
  readonly lastTradeId: number;
  readonly lastTradePrice: PriceTicks;
  readonly lastTradeAmount: Lots;
  readonly lastTradeTime: number;
  readonly time: number;
}

export interface BalanceChanged {
  readonly type: 'BalanceChanged';
  readonly userId: number;
  readonly coin: string;
  /** Balances after the change. */
  readonly available: CoinUnits;
  readonly frozen: CoinUnits;
  readonly deltaAvailable: CoinUnits;
  readonly deltaFrozen: CoinUnits;
  readonly billType: BillType;
  /** The order, trade, deposit or withdrawal the change belongs to. */
  readonly ref: string;
  readonly time: number;
}

export interface UserRegistered {
  readonly type: 'UserRegistered';
  readonly userId: number;
  readonly name: string;
  readonly time: number;
}

export interface FeePreferenceSet {
  readonly type: 'FeePreferenceSet';
  readonly userId: number;
  readonly usePlatformCoin: boolean;
}

export interface DeadmanArmed {
  readonly type: 'DeadmanArmed';
  readonly userId: number;
  readonly market: string;
  readonly deadline: number;
}

export interface DeadmanFired {
  readonly type: 'DeadmanFired';
  readonly userId: number;
  readonly market: string;
  readonly cancelled: number;
  readonly time: number;
}

export interface DepositCredited {
  readonly type: 'DepositCredited';
  readonly depositId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly time: number;
}

export interface WithdrawalFrozen {
  readonly type: 'WithdrawalFrozen';
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly fee: CoinUnits;
  readonly time: number;
}

export interface WithdrawalSettled {
  readonly type: 'WithdrawalSettled';
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly fee: CoinUnits;
  readonly time: number;
}

export interface WithdrawalReleased {
  readonly type: 'WithdrawalReleased';
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly fee: CoinUnits;
  readonly reason: 'failed' | 'cancelled';
  readonly time: number;
}

export interface CoinUpserted {
  readonly type: 'CoinUpserted';
  readonly coin: CoinSpec;
}

export interface MarketUpserted {
  readonly type: 'MarketUpserted';
  readonly market: MarketSpec;
}

export interface MarketStatusSet {
  readonly type: 'MarketStatusSet';
  readonly market: string;
  readonly status: MarketStatus;
}

export interface ApiKeyCreated {
  readonly type: 'ApiKeyCreated';
  readonly userId: number;
  readonly accessKey: string;
  readonly time: number;
}

export interface ApiKeyDeleted {
  readonly type: 'ApiKeyDeleted';
  readonly userId: number;
  readonly accessKey: string;
  readonly time: number;
}

export type EngineEvent =
  | OrderAccepted
  | TradeExecuted
  | OrderUpdated
  | BalanceChanged
  | UserRegistered
  | FeePreferenceSet
  | DeadmanArmed
  | DeadmanFired
  | DepositCredited
  | WithdrawalFrozen
  | WithdrawalSettled
  | WithdrawalReleased
  | CoinUpserted
  | MarketUpserted
  | MarketStatusSet
  | ApiKeyCreated
  | ApiKeyDeleted;
