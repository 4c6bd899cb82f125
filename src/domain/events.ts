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
import type { LoanRecord, RepaymentRecord } from '../margin/loans.ts';
import type { CoinFunds, DepositState, WithdrawalState } from './chains.ts';
import type { AcctType, FaucetAllowance, OrderKind, ReplaySource, Side, UserStatus } from './commands.ts';
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
/** Why an order was cancelled; `operator`: by the operator (a user's orders, or a closed market). */
export type CancelReason = 'user' | 'ioc' | 'selfTrade' | 'deadman' | 'operator' | 'liquidation';

/**
 * Why a balance changed: the bill type. A change of 0 in total (freeze, release) is no bill.
 * transferOut / transferIn: an internal transfer (withdraw with itransfer to another user).
 */
export type BillType =
  | 'deposit'
  | 'withdraw'
  | 'withdrawFee'
  // A withdrawal's amount and fee back to available, cancelled or failed (change 0: the history
  // store's name for that release, which the engine journals as `unfreeze`; issue 33).
  | 'withdrawCancelled'
  | 'withdrawFailed'
  | 'transferOut'
  | 'transferIn'
  // Sub-accounts (issue 33): a main user's transfer between two users of its family.
  | 'subTransferOut'
  | 'subTransferIn'
  | 'buy'
  | 'sell'
  | 'buyFee'
  | 'sellFee'
  | 'freeze'
  | 'unfreeze'
  // Margin (issue 14, src/engine/margin.ts): between spot and a margin account, either way.
  | 'toMargin'
  | 'fromMargin'
  // Lending: an offer frozen or released; a loan's principal, its interest and the venue's share.
  | 'loanOffer'
  | 'loanCancel'
  | 'borrow'
  | 'repayPrincipal'
  | 'repayInterest'
  | 'interestShare'
  // Liquidation (issue 15): the fee taken, and the insurance fund's cover of a shortfall.
  | 'liquidationFee'
  | 'insuranceCover';

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

/** The margin account a balance change happened in (src/engine/ledger.ts). */
export type MarginAccountRef =
  { readonly kind: 'isolated'; readonly market: string } | { readonly kind: 'cross' };

export interface BalanceChanged {
  readonly type: 'BalanceChanged';
  readonly userId: number;
  /** Set only for a margin account; a spot change has no `account` (its form is unchanged). */
  readonly account?: MarginAccountRef;
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

/** A user registered as a sub-account of `mainUserId` (after its UserRegistered). */
export interface SubUserAdded {
  readonly type: 'SubUserAdded';
  readonly mainUserId: number;
  readonly userId: number;
  readonly memo: string;
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

export interface DepositAddressAssigned {
  readonly type: 'DepositAddressAssigned';
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  /** The address, or a memo chain's shared account. */
  readonly address: string;
  /** The user's memo on a memo chain, else ''. */
  readonly memo: string;
  readonly time: number;
}

/**
 * A deposit record as it is after a change: seen on chain, more confirmations, credited, failed;
 * an operator credit or an internal transfer is credited at once. Balance changes come first.
 */
export interface DepositUpdated {
  readonly type: 'DepositUpdated';
  /** The record's key: the operator's id, `chain:<coin>/<chain>/<tx>/<output>`, or `internal:<withdrawal>`. */
  readonly depositId: string;
  readonly userId: number;
  readonly coin: string;
  /** '' for an operator credit. */
  readonly chain: string;
  /** The transaction hash; '' for an operator credit or an internal transfer. */
  readonly txHash: string;
  /** The deposit address in wire form (`<account>_<memo>` on memo chains); '' for an operator credit. */
  readonly address: string;
  readonly amount: CoinUnits;
  readonly confirmations: number;
  readonly state: DepositState;
  /** An internal transfer from another user of the venue. */
  readonly itransfer: boolean;
  /** Why a failed deposit failed, an operator credit's remark, or what an internal transfer was. */
  readonly note: string;
  readonly time: number;
}

export interface WithdrawAddressUpdated {
  readonly type: 'WithdrawAddressUpdated';
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  readonly address: string;
  readonly verified: boolean;
  readonly time: number;
}

export interface FundPasswordSet {
  readonly type: 'FundPasswordSet';
  readonly userId: number;
  readonly time: number;
}

export interface FundPasswordFailed {
  readonly type: 'FundPasswordFailed';
  readonly userId: number;
  /** Wrong attempts within the window, this one included. */
  readonly failures: number;
  /** Until when withdrawals are locked (ms); 0 when not locked. */
  readonly lockedUntil: number;
  readonly time: number;
}

/**
 * A withdrawal record as it is after a change of state (or of confirmations). Balance changes
 * come first: the freeze on submission, the release on failure or cancellation, the payout and
 * fee on success, the two transfers of an internal one.
 */
export interface WithdrawalUpdated {
  readonly type: 'WithdrawalUpdated';
  readonly withdrawalId: string;
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  /** The receiving address in wire form. */
  readonly address: string;
  readonly amount: CoinUnits;
  /** The fee charged (0 for an internal transfer). */
  readonly fee: CoinUnits;
  readonly state: WithdrawalState;
  readonly txHash: string;
  readonly confirmations: number;
  readonly itransfer: boolean;
  /** Why it failed or who cancelled it; else ''. */
  readonly reason: string;
  readonly submitTime: number;
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

/** A coin's chains, fees, minimums and limits were set (AddCoin, ChangeCoin). */
export interface CoinFundsSet {
  readonly type: 'CoinFundsSet';
  readonly funds: CoinFunds;
}

export interface UserStatusSet {
  readonly type: 'UserStatusSet';
  readonly userId: number;
  readonly status: UserStatus;
  readonly time: number;
}

/** A user's own daily withdrawal limit of a coin was set, or cleared (`limit` null). */
export interface WithdrawLimitSet {
  readonly type: 'WithdrawLimitSet';
  readonly userId: number;
  readonly coin: string;
  readonly limit: CoinUnits | null;
  readonly time: number;
}

export interface ApiKeyRotated {
  readonly type: 'ApiKeyRotated';
  readonly userId: number;
  readonly accessKey: string;
  readonly time: number;
}

export interface DemoStarted {
  readonly type: 'DemoStarted';
  readonly faucet: readonly FaucetAllowance[];
  readonly time: number;
}

export interface DemoUserMarked {
  readonly type: 'DemoUserMarked';
  readonly userId: number;
  readonly time: number;
}

export interface DemoStopped {
  readonly type: 'DemoStopped';
  readonly time: number;
}

/** A replay started (StartReplay): its id (the command's seq) and inputs. */
export interface ReplayStarted {
  readonly type: 'ReplayStarted';
  readonly replayId: number;
  readonly sources: readonly ReplaySource[];
  readonly historyStart: number;
  readonly time: number;
}

export interface ReplayEnded {
  readonly type: 'ReplayEnded';
  readonly replayId: number;
  readonly reason: 'finished' | 'stopped';
  readonly played: number;
  readonly time: number;
}

/**
 * A loan record closed (status 2, 4 or 6; issue 29): the engine keeps open records only, so this
 * is the record's last state, which the history store keeps and serves (getLoanRecords).
 */
export interface LoanClosed {
  readonly type: 'LoanClosed';
  readonly loan: Readonly<LoanRecord>;
  readonly time: number;
}

/** A payment on a loan record (getRepayments, getCrossRepayRecords), kept by the history store only. */
export interface LoanRepaid {
  readonly type: 'LoanRepaid';
  readonly repayment: RepaymentRecord;
  readonly time: number;
}

/** The whole state was replaced (RestoreSandbox): caches of books, tickers and accounts start afresh. */
export interface SandboxRestored {
  readonly type: 'SandboxRestored';
  readonly name: string;
  readonly time: number;
}

export type EngineEvent =
  | OrderAccepted
  | TradeExecuted
  | OrderUpdated
  | BalanceChanged
  | UserRegistered
  | SubUserAdded
  | FeePreferenceSet
  | DeadmanArmed
  | DeadmanFired
  | DepositAddressAssigned
  | DepositUpdated
  | WithdrawAddressUpdated
  | FundPasswordSet
  | FundPasswordFailed
  | WithdrawalUpdated
  | CoinUpserted
  | MarketUpserted
  | MarketStatusSet
  | ApiKeyCreated
  | ApiKeyDeleted
  | CoinFundsSet
  | UserStatusSet
  | WithdrawLimitSet
  | ApiKeyRotated
  | DemoStarted
  | DemoUserMarked
  | DemoStopped
  | ReplayStarted
  | ReplayEnded
  | LoanClosed
  | LoanRepaid
  | SandboxRestored;
