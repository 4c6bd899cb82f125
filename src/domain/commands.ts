/**
 * @module commands — the engine's input vocabulary: a closed union of imperative commands.
 *
 * Amounts are integers already (ticks, lots, coin units): decimal text is parsed at the edge with
 * the market's scales (see `parseOrderNumbers`). Every command reaching the engine carries the
 * sequence number and the time the sequencer stamped on it; the engine reads no clock.
 */
import type { CoinUnits, Lots, PriceTicks } from './money.ts';
import type { CoinSpec, MarketSpec, MarketStatus } from './specs.ts';

/** Side of an order: the interface's tradeType (1 buy, 0 sell). */
export const SELL = 0;
export const BUY = 1;
export type Side = typeof SELL | typeof BUY;

/** How an order meets the book. */
export type OrderKind = 'limit' | 'postOnly' | 'ioc';

/** Account an order trades for: 0 spot, 1 isolated margin, 2 cross margin. */
export type AcctType = 0 | 1 | 2;

export interface PlaceOrder {
  readonly type: 'PlaceOrder';
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: PriceTicks;
  readonly amount: Lots;
  readonly acctType: AcctType;
  /** 4–36 letters or digits, or '' for none. */
  readonly clientOrderId: string;
}

/** orderMoreV2: up to 20 orders on one side of one market, all validated before any is placed. */
export interface PlaceOrderBatch {
  readonly type: 'PlaceOrderBatch';
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly acctType: AcctType;
  readonly orders: readonly { readonly price: PriceTicks; readonly amount: Lots }[];
}

/** Cancel by order id (`orderId` > 0) or by client order id (the latest order with it). */
export interface CancelOrder {
  readonly type: 'CancelOrder';
  readonly userId: number;
  readonly market: string;
  readonly orderId: number;
  readonly clientOrderId: string;
}

/** Arms or refreshes the user's dead-man switch for one market. */
export interface CancelAllOrdersAfter {
  readonly type: 'CancelAllOrdersAfter';
  readonly userId: number;
  readonly market: string;
}

/** Fires every timer whose deadline is at or before the command's time. Issued by the scheduler. */
export interface FireTimers {
  readonly type: 'FireTimers';
}

export interface RegisterUser {
  readonly type: 'RegisterUser';
  readonly name: string;
}

export interface SetFeePreference {
  readonly type: 'SetFeePreference';
  readonly userId: number;
  /** Pay trading fees with the platform coin (zb) at a discount. */
  readonly usePlatformCoin: boolean;
}

/** Credits a confirmed deposit. Applies once per `depositId`. */
export interface CreditDeposit {
  readonly type: 'CreditDeposit';
  readonly depositId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly remark: string;
}

/** Freezes amount + fee for a pending withdrawal. Applies once per `withdrawalId`. */
export interface FreezeWithdrawal {
  readonly type: 'FreezeWithdrawal';
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly fee: CoinUnits;
}

/** The withdrawal succeeded: its frozen funds leave the venue (the fee becomes fee income). */
export interface SettleWithdrawal {
  readonly type: 'SettleWithdrawal';
  readonly withdrawalId: string;
}

/** The withdrawal failed or was cancelled: its frozen funds return to available. */
export interface ReleaseWithdrawal {
  readonly type: 'ReleaseWithdrawal';
  readonly withdrawalId: string;
  readonly reason: 'failed' | 'cancelled';
}

export interface UpsertCoin {
  readonly type: 'UpsertCoin';
  readonly coin: CoinSpec;
}

export interface UpsertMarket {
  readonly type: 'UpsertMarket';
  readonly market: MarketSpec;
}

export interface SetMarketStatus {
  readonly type: 'SetMarketStatus';
  readonly market: string;
  readonly status: MarketStatus;
}

/** What an API key may do (the interface's four permission flags). */
export interface KeyPermissions {
  readonly asset: boolean;
  readonly entrust: boolean;
  readonly money: boolean;
  readonly lever: boolean;
}

/**
 * Registers an API key. The secret travels sealed (encrypted by the gateway with the operator's
 * master key), so neither the journal nor snapshots hold it in plain sight.
 */
export interface CreateApiKey {
  readonly type: 'CreateApiKey';
  readonly userId: number;
  readonly accessKey: string;
  readonly sealedSecret: string;
  readonly permissions: KeyPermissions;
  /** Bound IP addresses; empty means any. */
  readonly ips: readonly string[];
}

export interface DeleteApiKey {
  readonly type: 'DeleteApiKey';
  readonly accessKey: string;
}

export type Command =
  | PlaceOrder
  | PlaceOrderBatch
  | CancelOrder
  | CancelAllOrdersAfter
  | FireTimers
  | RegisterUser
  | SetFeePreference
  | CreditDeposit
  | FreezeWithdrawal
  | SettleWithdrawal
  | ReleaseWithdrawal
  | UpsertCoin
  | UpsertMarket
  | SetMarketStatus
  | CreateApiKey
  | DeleteApiKey;

export type CommandType = Command['type'];

/** What the sequencer stamps on each command: its journal position and its time (ms). */
export interface Stamp {
  readonly seq: number;
  readonly time: number;
}

export type SequencedCommand = Command & Stamp;

/** An access key: 8–64 letters, digits or dashes. */
export const ACCESS_KEY = /^[A-Za-z0-9-]{8,64}$/;
/** How many IP addresses one key may be bound to. */
export const MAX_KEY_IPS = 20;

/** 4–36 letters or digits (the interface's customerOrderId). */
export const CLIENT_ORDER_ID = /^[A-Za-z0-9]{4,36}$/;
