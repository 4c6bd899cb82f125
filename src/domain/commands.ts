/**
 * @module commands — the engine's input vocabulary: a closed union of imperative commands.
 *
 * Amounts are integers already (ticks, lots, coin units): decimal text is parsed at the edge with
 * the market's scales (see `parseOrderNumbers`). Every command reaching the engine carries the
 * sequence number and the time the sequencer stamped on it; the engine reads no clock.
 */
import type { CoinUnits, Lots, PriceTicks, RatePpm } from './money.ts';
import type { CoinFunds } from './chains.ts';
import type { CoinSpec, MarketSpec, MarketStatus } from './specs.ts';

/** Side of an order: the interface's tradeType (1 buy, 0 sell). */
export const SELL = 0;
export const BUY = 1;
export type Side = typeof SELL | typeof BUY;

/** How an order meets the book. */
export type OrderKind = 'limit' | 'postOnly' | 'ioc';

/** Account an order trades for: 0 spot, 1 isolated margin, 2 cross margin. */
export type AcctType = 0 | 1 | 2;
export const SPOT_ACCOUNT = 0;
export const ISOLATED_ACCOUNT = 1;
export const CROSS_ACCOUNT = 2;
/** A margin account's type: 1 isolated (one per user and market), 2 cross (one per user). */
export type MarginAcctType = typeof ISOLATED_ACCOUNT | typeof CROSS_ACCOUNT;

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
  /**
   * `enableExpress` (margin orders only): borrow what the order needs beyond the margin account's
   * available balance, within its borrowing limit. Absent means off (every journal before issue 14).
   */
  readonly express?: boolean;
}

/** orderMoreV2: up to 20 orders on one side of one market, all validated before any is placed. */
export interface PlaceOrderBatch {
  readonly type: 'PlaceOrderBatch';
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly acctType: AcctType;
  readonly orders: readonly { readonly price: PriceTicks; readonly amount: Lots }[];
  /** As PlaceOrder's `express`, for the whole batch. */
  readonly express?: boolean;
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
  /**
   * Refuse the name when a user's name equals it ignoring case (issue 13). Every producer of new
   * commands sets it; journals written before it lack it and replay under the old, exact rule,
   * so a history that already holds `alice` and `Alice` still replays to the same state.
   */
  readonly uniqueIgnoringCase?: true;
}

export interface SetFeePreference {
  readonly type: 'SetFeePreference';
  readonly userId: number;
  /** Pay trading fees with the platform coin (zb) at a discount. */
  readonly usePlatformCoin: boolean;
}

/**
 * The operator credits a deposit made outside any chain adapter. Applies once per `depositId`
 * (which may not start with `chain:` or `internal:`, the engine's own deposit ids).
 */
export interface CreditDeposit {
  readonly type: 'CreditDeposit';
  readonly depositId: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly remark: string;
}

/**
 * Records the deposit address a chain adapter assigned to a user: on a memo chain the shared
 * account in `address` and the user's memo in `memo`; otherwise the user's address and memo ''.
 */
export interface AssignDepositAddress {
  readonly type: 'AssignDepositAddress';
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  readonly address: string;
  readonly memo: string;
}

/**
 * What a chain adapter reports about one output paying a deposit address: its confirmations so
 * far, or that it failed. Applied once per (coin, chain, txHash, output) however often it comes.
 */
export interface ReportDeposit {
  readonly type: 'ReportDeposit';
  readonly coin: string;
  readonly chain: string;
  readonly txHash: string;
  readonly output: number;
  readonly address: string;
  readonly memo: string;
  readonly amount: CoinUnits;
  readonly confirmations: number;
  readonly failed: boolean;
}

/** Adds a withdrawal address (wire form: `<account>_<memo>` on memo chains) to a user's book, unverified. */
export interface AddWithdrawAddress {
  readonly type: 'AddWithdrawAddress';
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  readonly address: string;
}

/** Marks an address of the user's book verified: withdrawals may go to it. */
export interface VerifyWithdrawAddress {
  readonly type: 'VerifyWithdrawAddress';
  readonly userId: number;
  readonly coin: string;
  readonly address: string;
}

/** Sets a user's fund password: a slow hash made at the edge (the engine never sees the password). */
export interface SetFundPassword {
  readonly type: 'SetFundPassword';
  readonly userId: number;
  readonly hash: string;
}

/**
 * A fund-password attempt, counted before the edge checks the slow hash, so that concurrent
 * guesses cannot all be checked before any failure counts. `attempt: 'begin'` takes one of the
 * attempts left (5 in 24 hours; FUND_PASSWORD_LOCKED when none is left), then `'wrong'` makes it a
 * failure (the fifth in 24 hours locks withdrawals for 24 hours) or `'right'` gives it back.
 * Without `attempt` (journals written before attempts were counted ahead) it is one wrong
 * password, counted at once, as `'wrong'` without a `'begin'`.
 */
export interface RecordFundPasswordFailure {
  readonly type: 'RecordFundPasswordFailure';
  readonly userId: number;
  readonly attempt?: FundPasswordAttempt;
}

/** The steps of one fund-password check (see RecordFundPasswordFailure). */
export type FundPasswordAttempt = 'begin' | 'wrong' | 'right';

/**
 * The user's withdraw request (the edge has checked the fund password). `address` is the wire
 * form and must be a verified address of the user's book, which names the chain. With
 * `itransfer`, an address of another user of the venue is paid at once, without a chain fee.
 */
export interface RequestWithdrawal {
  readonly type: 'RequestWithdrawal';
  readonly userId: number;
  readonly coin: string;
  readonly address: string;
  readonly amount: CoinUnits;
  readonly fee: CoinUnits;
  readonly itransfer: boolean;
}

/** The operator approves a submitted withdrawal. */
export interface ApproveWithdrawal {
  readonly type: 'ApproveWithdrawal';
  readonly withdrawalId: string;
}

/** Cancels a withdrawal before it is sent: by its owner (`userId`), or by the operator (no `userId`). */
export interface CancelWithdrawal {
  readonly type: 'CancelWithdrawal';
  readonly withdrawalId: string;
  readonly userId?: number;
}

/** The chain adapter claims an approved withdrawal before broadcasting it: it can no longer be cancelled. */
export interface SendWithdrawal {
  readonly type: 'SendWithdrawal';
  readonly withdrawalId: string;
}

/** The chain adapter broadcast the withdrawal as `txHash`. */
export interface MarkWithdrawalSent {
  readonly type: 'MarkWithdrawalSent';
  readonly withdrawalId: string;
  readonly txHash: string;
}

/** The withdrawal's transaction has `confirmations`; at the chain's required number it has succeeded. */
export interface ConfirmWithdrawal {
  readonly type: 'ConfirmWithdrawal';
  readonly withdrawalId: string;
  readonly confirmations: number;
}

/** The withdrawal failed (its transaction failed, or it could not be sent): its funds are released. */
export interface FailWithdrawal {
  readonly type: 'FailWithdrawal';
  readonly withdrawalId: string;
  readonly reason: string;
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

/** What an API key may do (the interface's four permission flags, and the venue's subUserPerm). */
export interface KeyPermissions {
  readonly asset: boolean;
  readonly entrust: boolean;
  readonly money: boolean;
  readonly lever: boolean;
  /**
   * Managing the user's sub-accounts (getAccountInfo's `subUserPerm`; issue 33). Optional: keys
   * created before it (and their snapshots) have none, which means no.
   */
  readonly subUser?: boolean;
}

/** The operator's names of the permissions (`--perms asset,subuser`), each with its flag. */
export const PERMISSION_NAMES = {
  asset: 'asset',
  entrust: 'entrust',
  money: 'money',
  lever: 'lever',
  subuser: 'subUser',
} as const satisfies Record<string, keyof KeyPermissions>;

/** The names a key holds, in PERMISSION_NAMES order. */
export function permissionNames(p: KeyPermissions): string[] {
  return Object.entries(PERMISSION_NAMES)
    .filter(([, flag]) => p[flag] === true)
    .map(([name]) => name);
}

/** What each permission grants (docs/api-keys.md, "Permissions"): for help texts and refusals. */
export const KEY_PERMISSION_HELP =
  'asset (account and bills), entrust (orders), money (addresses, deposits, withdrawals), lever (margin), ' +
  'subuser (sub-accounts)';

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
  /**
   * Strict mode (docs/api-keys.md, "Replays"): each signed request is accepted once, and must sign
   * a fresh `nonce`. Absent (every key created before it existed) means off.
   */
  readonly replayProtection?: boolean;
}

export interface DeleteApiKey {
  readonly type: 'DeleteApiKey';
  readonly accessKey: string;
}

// ───────────── runtime changes (issue 16): src/engine/venue-changes.ts applies them ─────────────

/** Adds a coin the venue does not know, with its chains (none: it moves only by operator credit). */
export interface AddCoin {
  readonly type: 'AddCoin';
  readonly coin: CoinSpec;
  readonly funds?: CoinFunds;
}

/**
 * Changes a known coin's names, switches and (with `funds`) its chains' fees, minimums,
 * confirmations and switches and its limits. unitDecimal is fixed; a chain may be added, never removed.
 */
export interface ChangeCoin {
  readonly type: 'ChangeCoin';
  readonly coin: CoinSpec;
  readonly funds?: CoinFunds;
}

/** Adds a market between two known coins. A negative makerFee is a rebate (at most the takerFee). */
export interface AddMarket {
  readonly type: 'AddMarket';
  readonly market: MarketSpec;
}

/** Changes a known, open market's fees, minimums and status; its coins and scales are fixed. */
export interface ChangeMarket {
  readonly type: 'ChangeMarket';
  readonly market: MarketSpec;
}

/** Closes a market for good: every resting order is cancelled (funds released), status `closed`. */
export interface CloseMarket {
  readonly type: 'CloseMarket';
  readonly market: string;
}

/** A user's status: `frozen` refuses their orders and withdrawals; reads and cancels still work. */
export type UserStatus = 'active' | 'frozen';

/** Freezes or unfreezes a user. */
export interface SetUserStatus {
  readonly type: 'SetUserStatus';
  readonly userId: number;
  readonly status: UserStatus;
}

/** Cancels a user's resting orders: in one market, or (market '') in every market. */
export interface CancelUserOrders {
  readonly type: 'CancelUserOrders';
  readonly userId: number;
  readonly market: string;
}

/**
 * Sets (`limit` ≥ 0, coin units per UTC day) or clears (`limit` null) a user's own daily
 * withdrawal limit of a coin; it replaces the coin's limit for that user.
 */
export interface SetWithdrawLimit {
  readonly type: 'SetWithdrawLimit';
  readonly userId: number;
  readonly coin: string;
  readonly limit: CoinUnits | null;
}

/**
 * Gives an API key a new secret (sealed under the current master key), keeping its access key,
 * owner, permissions, bound IPs and strict mode: rotation, and reissue after a master-key change.
 */
export interface RotateApiKey {
  readonly type: 'RotateApiKey';
  readonly accessKey: string;
  readonly sealedSecret: string;
}

// ───────────── sub-accounts (issue 33): src/engine/sub-accounts.ts applies them ─────────────

/**
 * A main user opens a sub-account: a user of its own (spot and margin accounts, orders, bills,
 * keys) owned by `mainUserId`, who must not be a sub-account itself. `passwordHash` is the
 * sub-account's fund password, a slow hash made at the edge as SetFundPassword's.
 */
export interface AddSubUser {
  readonly type: 'AddSubUser';
  readonly mainUserId: number;
  readonly name: string;
  readonly memo: string;
  readonly passwordHash: string;
}

/**
 * Moves `amount` of a coin's available spot balance between two users of one family: a main user
 * and its sub-accounts (main ↔ sub, sub ↔ sub), asked for by the main user.
 */
export interface TransferFunds {
  readonly type: 'TransferFunds';
  readonly mainUserId: number;
  readonly fromUserId: number;
  readonly toUserId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
}

/** The sub-account commands (src/engine/sub-accounts.ts). */
export type SubAccountCommand = AddSubUser | TransferFunds;

export const SUB_ACCOUNT_COMMAND_TYPES = [
  'AddSubUser',
  'TransferFunds',
] as const satisfies readonly CommandType[];

/** The runtime-change commands. */
export type VenueChangeCommand =
  | AddCoin
  | ChangeCoin
  | AddMarket
  | ChangeMarket
  | CloseMarket
  | SetUserStatus
  | CancelUserOrders
  | SetWithdrawLimit
  | RotateApiKey;

export const VENUE_CHANGE_COMMAND_TYPES = [
  'AddCoin',
  'ChangeCoin',
  'AddMarket',
  'ChangeMarket',
  'CloseMarket',
  'SetUserStatus',
  'CancelUserOrders',
  'SetWithdrawLimit',
  'RotateApiKey',
] as const satisfies readonly VenueChangeCommand['type'][];

/** A coin the demo faucet gives, and how much of it one demo user may take per UTC hour. */
export interface FaucetAllowance {
  readonly coin: string;
  readonly perHour: CoinUnits;
}

/** Starts the demo market (src/engine/demo-state.ts), once per venue, with its faucet's allowances. */
export interface StartDemo {
  readonly type: 'StartDemo';
  readonly faucet: readonly FaucetAllowance[];
}

/** Marks a user as a demo user (a bot or the demo trader): the faucet serves demo users only. */
export interface MarkDemoUser {
  readonly type: 'MarkDemoUser';
  readonly userId: number;
}

/** Stops the demo's bots for good (a restart does not bring them back); their users stay demo users. */
export interface StopDemo {
  readonly type: 'StopDemo';
}

/** One file of a replay (src/engine/replay-record.ts): what it is, its content's hash, the market it drives. */
export interface ReplaySource {
  /** The file as the operator named it. */
  readonly file: string;
  /** SHA-256 of the file's bytes, 64 lowercase hex digits: a resumed replay checks the file is the same. */
  readonly sha256: string;
  /** One of src/replay/replay-data.ts's REPLAY_FORMATS. */
  readonly format: string;
  readonly market: string;
  /** How many trades the replay sends from it (after candles are turned into trades). */
  readonly trades: number;
}

/**
 * Starts replaying historical market data on a sandbox (docs/sandbox.md, "Replay"): the replay's
 * inputs, journaled. Its id is the command's sequence number; the replayed flow follows as
 * ordinary orders whose client order ids carry the replay's position.
 */
export interface StartReplay {
  readonly type: 'StartReplay';
  readonly sources: readonly ReplaySource[];
  /** The history's first time (ms): it plays at the command's own time. */
  readonly historyStart: number;
}

/** Ends a replay: every trade played (`finished`), or the operator stopped it (`stopped`). */
export interface EndReplay {
  readonly type: 'EndReplay';
  readonly replayId: number;
  readonly reason: 'finished' | 'stopped';
  /** How many trades were sent. */
  readonly played: number;
}

/** A demo user credits themself test money, within the coin's hourly allowance. */
export interface DemoFaucet {
  readonly type: 'DemoFaucet';
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
}

/**
 * A sandbox's restore or reset (issue 35, src/sandbox/, docs/sandbox.md): the whole engine state
 * is replaced by `state`, a snapshot (src/engine/snapshot.ts) carried in the command itself, so a
 * replay restores it again without the save file. Refused, changing nothing, when it does not load.
 */
export interface RestoreSandbox {
  readonly type: 'RestoreSandbox';
  /** The save point's name, or `reset` for a fresh demo venue. */
  readonly name: string;
  readonly state: Readonly<Record<string, unknown>>;
}

// ───────────────────────────── margin (issue 14, src/engine/margin.ts) ─────────────────────────────
//
// A margin account is named by `acctType` and `market`: 1 and the market's name for the isolated
// account of (user, market), 2 and '' for the user's cross account. Amounts are coin units; daily
// rates are ppm of the principal per day (the wire's percent "0.05" is 500 ppm); terms are days.

/** Moves `amount` of a coin between the user's spot account and one of their margin accounts. */
export interface MarginTransfer {
  readonly type: 'MarginTransfer';
  readonly userId: number;
  /** 'in': spot → margin; 'out': margin → spot (only what keeps the account at its opening line). */
  readonly direction: 'in' | 'out';
  readonly acctType: MarginAcctType;
  /** The isolated account's market (canonical name, e.g. `btc_usdt`); '' for cross. */
  readonly market: string;
  readonly coin: string;
  readonly amount: CoinUnits;
}

/**
 * The operator funds the platform lending pool (`bourse lending fund`): `amount` of `coin` is
 * credited to the pool and offered at `dailyRatePpm` for `days`, rolling over (the pool re-invests
 * what comes back). Applies once per `fundingId`.
 */
export interface FundLendingPool {
  readonly type: 'FundLendingPool';
  readonly fundingId: string;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
}

/** `loan`: a user offers `amount` of a coin from their spot account (frozen until lent or cancelled). */
export interface PlaceLoanOffer {
  readonly type: 'PlaceLoanOffer';
  readonly userId: number;
  readonly coin: string;
  readonly amount: CoinUnits;
  readonly dailyRatePpm: RatePpm;
  readonly days: number;
  /** `isLoop`: principal that comes back is offered again. */
  readonly loop: boolean;
}

/** `cancelLoan`: the unlent part of the user's offer goes back to their available balance. */
export interface CancelLoanOffer {
  readonly type: 'CancelLoanOffer';
  readonly userId: number;
  readonly offerId: number;
}

/** `changeLoop`: sets an offer's `isLoop`. */
export interface ChangeLoanLoop {
  readonly type: 'ChangeLoanLoop';
  readonly userId: number;
  readonly offerId: number;
  readonly loop: boolean;
}

/** `changeInvestMark`: the lender sets a loan record's mark (re-invest principal, allow roll-over). */
export interface ChangeInvestMark {
  readonly type: 'ChangeInvestMark';
  readonly userId: number;
  readonly loanId: number;
  readonly investMark: boolean;
}

/**
 * `borrow` / `autoBorrow` (isolated) and `doCrossLoan` (cross): takes `amount` of a coin from the
 * cheapest offers (the pool's included), all or nothing, within the account's borrowing limit.
 */
export interface Borrow {
  readonly type: 'Borrow';
  readonly userId: number;
  readonly acctType: MarginAcctType;
  readonly market: string;
  readonly coin: string;
  readonly amount: CoinUnits;
  /** Only offers at or below this daily rate (`interestRateOfDay`); absent: any. */
  readonly maxDailyRatePpm?: RatePpm;
  /** Only offers of this term (`repaymentDay`: 10, 20 or 30); absent: any. */
  readonly days?: number;
  /** `isLoop`: roll the loan over at the end of its term. */
  readonly rollOver: boolean;
}

/** `repay`: pays part (`amount` units) or all of one loan record, interest first. */
export interface RepayLoan {
  readonly type: 'RepayLoan';
  readonly userId: number;
  readonly loanId: number;
  readonly amount: CoinUnits | 'all';
}

/** `doAllRepay` (isolated) / `doCrossRepay` (cross): pays what an account owes in one coin. */
export interface RepayAll {
  readonly type: 'RepayAll';
  readonly userId: number;
  readonly acctType: MarginAcctType;
  readonly market: string;
  readonly coin: string;
  readonly amount: CoinUnits | 'all';
}

/**
 * `setExpressState` / `setRepayState`: a margin account's defaults. `express`: its orders borrow
 * what they need (as an order's `express`); `autoRepay`: what a fill brings in repays the
 * account's debt in that coin. An absent field keeps its value (both start off).
 */
export interface SetMarginPreferences {
  readonly type: 'SetMarginPreferences';
  readonly userId: number;
  readonly acctType: MarginAcctType;
  readonly market: string;
  readonly express?: boolean;
  readonly autoRepay?: boolean;
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
  | AssignDepositAddress
  | ReportDeposit
  | AddWithdrawAddress
  | VerifyWithdrawAddress
  | SetFundPassword
  | RecordFundPasswordFailure
  | RequestWithdrawal
  | ApproveWithdrawal
  | CancelWithdrawal
  | SendWithdrawal
  | MarkWithdrawalSent
  | ConfirmWithdrawal
  | FailWithdrawal
  | UpsertCoin
  | UpsertMarket
  | SetMarketStatus
  | CreateApiKey
  | DeleteApiKey
  | StartDemo
  | MarkDemoUser
  | StopDemo
  | DemoFaucet
  | StartReplay
  | EndReplay
  | RestoreSandbox
  | VenueChangeCommand
  | MarginTransfer
  | FundLendingPool
  | PlaceLoanOffer
  | CancelLoanOffer
  | ChangeLoanLoop
  | ChangeInvestMark
  | Borrow
  | RepayLoan
  | RepayAll
  | SetMarginPreferences
  | SubAccountCommand;

export type CommandType = Command['type'];

/** The funds commands: deposits, addresses, fund passwords and withdrawals (src/engine/funds.ts). */
export type FundsCommand = Extract<Command, { type: (typeof FUNDS_COMMAND_TYPES)[number] }>;

/** The funds commands' types: the engine hands these to src/engine/funds.ts. */
export const FUNDS_COMMAND_TYPES = [
  'CreditDeposit',
  'AssignDepositAddress',
  'ReportDeposit',
  'AddWithdrawAddress',
  'VerifyWithdrawAddress',
  'SetFundPassword',
  'RecordFundPasswordFailure',
  'RequestWithdrawal',
  'ApproveWithdrawal',
  'CancelWithdrawal',
  'SendWithdrawal',
  'MarkWithdrawalSent',
  'ConfirmWithdrawal',
  'FailWithdrawal',
] as const satisfies readonly CommandType[];

/** The sandbox's commands: the demo market's and the replay's (src/engine/demo-state.ts, replay-record.ts). */
export type DemoCommand = Extract<Command, { type: (typeof DEMO_COMMAND_TYPES)[number] }>;

export const DEMO_COMMAND_TYPES = [
  'StartDemo',
  'MarkDemoUser',
  'StopDemo',
  'DemoFaucet',
  'StartReplay',
  'EndReplay',
] as const satisfies readonly CommandType[];

/** The margin commands (src/engine/margin.ts). Hourly interest rides on FireTimers. */
export type MarginCommand = Extract<Command, { type: (typeof MARGIN_COMMAND_TYPES)[number] }>;

export const MARGIN_COMMAND_TYPES = [
  'MarginTransfer',
  'FundLendingPool',
  'PlaceLoanOffer',
  'CancelLoanOffer',
  'ChangeLoanLoop',
  'ChangeInvestMark',
  'Borrow',
  'RepayLoan',
  'RepayAll',
  'SetMarginPreferences',
] as const satisfies readonly CommandType[];

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
