/**
 * @module funds — the engine's funds state machine: operator credits, chain deposits and their
 * confirmations, deposit addresses, withdrawal address books, fund-password failures and locks,
 * and withdrawals from submission to success, failure or cancellation, with internal transfers
 * and the daily limit. Pure and synchronous like the engine that calls it: time arrives with each
 * command, balances move through the engine's ledger. docs/funds.md describes the rules.
 */
import {
  DAY_MS,
  FUND_PASSWORD_LOCK_MS,
  FUND_PASSWORD_MAX_FAILURES,
  FUND_PASSWORD_WINDOW_MS,
  MAX_NOTE_LENGTH,
  RESERVED_DEPOSIT_ID,
  TX_HASH,
  chainDepositId,
  internalDepositId,
  isPendingWithdrawal,
  joinAddress,
  splitAddress,
  type ChainSpec,
  type CoinFunds,
  type DepositState,
} from '../domain/chains.ts';
import type {
  AddWithdrawAddress,
  ApproveWithdrawal,
  AssignDepositAddress,
  CancelWithdrawal,
  ConfirmWithdrawal,
  CreditDeposit,
  FailWithdrawal,
  FundsCommand,
  MarkWithdrawalSent,
  RecordFundPasswordFailure,
  ReportDeposit,
  RequestWithdrawal,
  SendWithdrawal,
  SetFundPassword,
  VerifyWithdrawAddress,
} from '../domain/commands.ts';
import { FUNDS_COMMAND_TYPES } from '../domain/commands.ts';
import type { BillType, DepositUpdated, EngineEvent, WithdrawalUpdated } from '../domain/events.ts';
import { formatUnitsTrim, type CoinUnits } from '../domain/money.ts';
import { UNVERIFIED_ADDRESS_TEXT, type ResultName } from '../domain/result-codes.ts';
import { checkCoinName, type CoinSpec } from '../domain/specs.ts';
import type { ApplyResult } from './results.ts';
import { outsideCreditRefusal, type OutsideHoldings } from './exact-range.ts';

const MAX_REFERENCE_LENGTH = 128;
/** Addresses one user may keep in the withdrawal book of one coin. */
export const MAX_WITHDRAW_ADDRESSES = 20;
/** The longest fund-password hash text accepted (the edge's format, opaque here). */
export const MAX_HASH_LENGTH = 512;

/** A coin as the engine's ledger knows it. */
export interface LedgerCoin {
  readonly index: number;
  readonly spec: CoinSpec;
}

/** What funds needs of the engine: users, coins and balances, each change recorded as a bill. */
export interface FundsLedger {
  hasUser(userId: number): boolean;
  /** A frozen user may not withdraw (SetUserStatus). */
  isFrozen(userId: number): boolean;
  coin(name: string): LedgerCoin | undefined;
  available(userId: number, coin: LedgerCoin): CoinUnits;
  /** Moves a balance and emits BalanceChanged; callers have checked that nothing goes negative. */
  change(
    userId: number,
    coin: LedgerCoin,
    deltaAvailable: CoinUnits,
    deltaFrozen: CoinUnits,
    bill: BillType,
    ref: string,
  ): void;
  addFeeIncome(coin: LedgerCoin, amount: CoinUnits): void;
  /** What the operator put into the lending pool in `coin`: the rest of the venue's outside holdings (exact-range.ts). */
  poolFunded(coin: string): bigint;
}

/**
 * A deposit record (an operator credit, a chain deposit, or the receiving side of an internal
 * transfer) as it is now: the fields of its latest DepositUpdated event.
 */
export type DepositView = Omit<DepositUpdated, 'type'>;

/** A withdrawal record as it is now: the fields of its latest WithdrawalUpdated event. */
export type WithdrawalView = Omit<WithdrawalUpdated, 'type'>;

export interface DepositAddressView {
  readonly coin: string;
  readonly chain: string;
  /** The address, or a memo chain's shared account. */
  readonly address: string;
  /** The user's memo on a memo chain, else ''. */
  readonly memo: string;
}

export interface WithdrawAddressView {
  readonly coin: string;
  readonly chain: string;
  readonly address: string;
  readonly verified: boolean;
}

export interface FundPasswordView {
  readonly hash: string;
  /** Wrong attempts still counting towards the lock. */
  readonly failures: readonly number[];
  /**
   * Attempts begun and not yet found right or wrong (their times): they count towards the lock
   * like failures until then, and for the whole window if they never end (a crash mid-check).
   */
  readonly pending: readonly number[];
  /** Withdrawals are locked until then (ms); 0 when never locked. */
  readonly lockedUntil: number;
}

/** The read side of funds, for the API and the chain watcher. */
export interface FundsView {
  /** Every coin's funds configuration, in configuration order. */
  config(): readonly CoinFunds[];
  coinFunds(coin: string): CoinFunds | undefined;
  chain(coin: string, chain: string): ChainSpec | undefined;
  /** The user's deposit addresses (of one coin, or all), in configuration order. */
  depositAddresses(userId: number, coin?: string): DepositAddressView[];
  /** The user a deposit address (and memo) belongs to. */
  depositAddressOwner(coin: string, chain: string, address: string, memo: string): number | undefined;
  /** The user's withdrawal book of a coin, oldest first. */
  withdrawAddresses(userId: number, coin: string): WithdrawAddressView[];
  fundPassword(userId: number): FundPasswordView | undefined;
  deposit(depositId: string): DepositView | undefined;
  withdrawal(withdrawalId: string): WithdrawalView | undefined;
  /** Every withdrawal (or those still in progress), by id. */
  withdrawals(pendingOnly: boolean): WithdrawalView[];
  /** Every deposit (operator credits, chain deposits, internal transfers), oldest first (the operator's venue-wide list). */
  deposits(): DepositView[];
  /** What the user has withdrawn of the coin on the UTC day of `time` (released ones excluded). */
  withdrawnOnDay(userId: number, coin: string, time: number): CoinUnits;
  /** The user's own daily withdrawal limit of the coin (SetWithdrawLimit), or undefined: the coin's. */
  userWithdrawLimit(userId: number, coin: string): CoinUnits | undefined;
  /** What a RequestWithdrawal would answer at `time`: its refusal, or undefined if accepted. */
  checkWithdrawal(cmd: RequestWithdrawal, time: number): ApplyResult | undefined;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type DepositRecord = Mutable<DepositView>;
type WithdrawalRecord = Mutable<WithdrawalView>;
type WithdrawAddressRecord = Mutable<Omit<WithdrawAddressView, 'coin'>>;

/** What an accepted RequestWithdrawal does (see `#planWithdrawal`). */
interface WithdrawalPlan {
  readonly coin: LedgerCoin;
  readonly chain: ChainSpec;
  readonly entry: WithdrawAddressRecord;
  /** The user an internal transfer pays (0 when external). */
  readonly receiver: number;
  readonly internal: boolean;
  /** The fee charged. */
  readonly fee: CoinUnits;
  readonly funds: CoinFunds;
  readonly day: number;
  readonly usedToday: CoinUnits;
}
interface PasswordRecord {
  hash: string;
  failures: number[];
  lockedUntil: number;
  pending: number[];
}
interface DailyRecord {
  day: number;
  used: CoinUnits;
}

const FUNDS_TYPES: ReadonlySet<string> = new Set(FUNDS_COMMAND_TYPES);

/** Whether a command is one of the funds commands (the engine's dispatch). */
export const isFundsCommand = (cmd: { readonly type: string }): cmd is FundsCommand =>
  FUNDS_TYPES.has(cmd.type);

/** The plain-data form of the funds state (part of the engine snapshot), in canonical order. */
export interface FundsSnapshot {
  readonly config: CoinFunds[];
  readonly nextWithdrawalId: number;
  /** [userId, coin, chain, address, memo] */
  readonly addresses: [number, string, string, string, string][];
  /** [userId, coin, chain, address, verified], each user's book of a coin in its order. */
  readonly withdrawAddresses: [number, string, string, string, boolean][];
  /**
   * [userId, hash, failure times, lockedUntil, pending attempt times]; the last only when there are
   * any, so that states without attempts in flight hash as they always did.
   */
  readonly passwords: [number, string, number[], number, number[]?][];
  readonly deposits: DepositView[];
  readonly withdrawals: WithdrawalView[];
  /** [userId, coin, day, used] */
  readonly daily: [number, string, number, number][];
  /** [coin, lifetime credits, lifetime settled withdrawals] as decimal integer text (they may pass 2^53). */
  readonly totals: [string, string, string][];
  /** [userId, coin, daily limit] users' own withdrawal limits; absent when none (hash unchanged). */
  readonly userLimits?: [number, string, number][];
}

const refused = (result: ResultName, message?: string): ApplyResult =>
  message === undefined ? { result, events: [] } : { result, message, events: [] };
const duplicate = (): ApplyResult => ({ result: 'OK', events: [], duplicate: true });
const byKey = <T>(a: [string, T], b: [string, T]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * The funds state and its commands. The engine routes every FundsCommand here (`apply`) and asks
 * it for the holds of pending withdrawals and the lifetime totals when it checks conservation.
 */
export class Funds implements FundsView {
  readonly #ledger: FundsLedger;
  readonly #config: CoinFunds[] = [];
  readonly #configByCoin = new Map<string, CoinFunds>();
  /** `${userId}:${coin}:${chain}` → the user's deposit address. */
  readonly #addresses = new Map<string, DepositAddressView>();
  /** `${coin}:${chain}:${address}:${memo}` → its user. */
  readonly #owners = new Map<string, number>();
  /** `${userId}:${coin}` → the withdrawal book. */
  readonly #books = new Map<string, WithdrawAddressRecord[]>();
  readonly #passwords = new Map<number, PasswordRecord>();
  readonly #deposits = new Map<string, DepositRecord>();
  readonly #withdrawals = new Map<string, WithdrawalRecord>();
  /** Ids of withdrawals in progress (their funds frozen). */
  readonly #pending = new Set<string>();
  /** `${userId}:${coin}` → what was withdrawn on the day of the latest request. */
  readonly #daily = new Map<string, DailyRecord>();
  /** Per coin: lifetime credits and settled withdrawals (bigint: they only grow). */
  readonly #credited = new Map<string, bigint>();
  readonly #withdrawn = new Map<string, bigint>();
  /** `${userId}:${coin}` → the user's own daily withdrawal limit (replacing the coin's). */
  readonly #userLimits = new Map<string, CoinUnits>();
  #nextWithdrawalId = 1;

  // Per-command scratch, set by `apply`.
  #events: EngineEvent[] = [];
  #time = 0;

  /** Funds with `config` (checked by the engine against its coins first). */
  constructor(config: readonly CoinFunds[], ledger: FundsLedger) {
    this.#ledger = ledger;
    for (const f of config) {
      const copy = { ...f, chains: f.chains.map((c) => ({ ...c })) };
      this.#config.push(copy);
      this.#configByCoin.set(f.coin, copy);
    }
  }

  /**
   * Adds a coin's funds configuration, or replaces it in place (the caller, src/engine/venue-changes.ts,
   * has checked it against the coins and the chains already used).
   */
  setCoinFunds(f: CoinFunds): void {
    const copy = { ...f, chains: f.chains.map((c) => ({ ...c })) };
    const i = this.#config.findIndex((g) => g.coin === f.coin);
    if (i < 0) this.#config.push(copy);
    else this.#config[i] = copy;
    this.#configByCoin.set(f.coin, copy);
  }

  /** Sets (or with `null` clears) a user's own daily withdrawal limit of a coin. */
  setWithdrawLimit(userId: number, coin: string, limit: CoinUnits | null): void {
    if (limit === null) this.#userLimits.delete(`${userId}:${coin}`);
    else this.#userLimits.set(`${userId}:${coin}`, limit);
  }

  userWithdrawLimit(userId: number, coin: string): CoinUnits | undefined {
    return this.#userLimits.get(`${userId}:${coin}`);
  }

  /** Applies one funds command at `time`, appending its events to `events`. A refusal changes nothing. */
  apply(cmd: FundsCommand, time: number, events: EngineEvent[]): ApplyResult {
    this.#events = events;
    this.#time = time;
    switch (cmd.type) {
      case 'CreditDeposit':
        return this.#creditDeposit(cmd);
      case 'AssignDepositAddress':
        return this.#assignDepositAddress(cmd);
      case 'ReportDeposit':
        return this.#reportDeposit(cmd);
      case 'AddWithdrawAddress':
        return this.#addWithdrawAddress(cmd);
      case 'VerifyWithdrawAddress':
        return this.#verifyWithdrawAddress(cmd);
      case 'SetFundPassword':
        return this.#setFundPassword(cmd);
      case 'RecordFundPasswordFailure':
        return this.#recordFundPasswordFailure(cmd);
      case 'RequestWithdrawal':
        return this.#requestWithdrawal(cmd);
      case 'ApproveWithdrawal':
        return this.#approveWithdrawal(cmd);
      case 'CancelWithdrawal':
        return this.#cancelWithdrawal(cmd);
      case 'SendWithdrawal':
        return this.#sendWithdrawal(cmd);
      case 'MarkWithdrawalSent':
        return this.#markWithdrawalSent(cmd);
      case 'ConfirmWithdrawal':
        return this.#confirmWithdrawal(cmd);
      case 'FailWithdrawal':
        return this.#failWithdrawal(cmd);
    }
  }

  #done(extra?: Omit<ApplyResult, 'result' | 'events'>): ApplyResult {
    return { result: 'OK', events: this.#events, ...extra };
  }

  // ───────────────────────────── shared checks ─────────────────────────────

  /** The user and coin a funds command names, or the refusal. */
  #userCoin(userId: number, coinName: string): LedgerCoin | ApplyResult {
    if (!this.#ledger.hasUser(userId)) return refused('USER_NOT_FOUND');
    const coin = typeof coinName === 'string' ? this.#ledger.coin(coinName) : undefined;
    if (coin !== undefined) return coin;
    const name = checkCoinName(String(coinName));
    return name.ok
      ? refused('UNKNOWN_COIN', `unknown coin '${String(coinName)}'`)
      : refused(name.result, name.message);
  }

  #chainOf(coin: string, chain: string): ChainSpec | ApplyResult {
    const spec = this.chain(coin, chain);
    return spec ?? refused('INVALID_PARAMETER', `coin ${coin} has no chain '${String(chain)}'`);
  }

  #amount(amount: number): ApplyResult | undefined {
    return Number.isSafeInteger(amount) && amount > 0
      ? undefined
      : refused('INVALID_AMOUNT', 'amount must be a positive number of units');
  }

  /** Credits `amount` as a deposit from outside, or refuses if the venue's holdings would leave the exact range. */
  #creditFromOutside(coin: LedgerCoin, amount: CoinUnits): ApplyResult | undefined {
    const range = outsideCreditRefusal(this.#outside, coin.spec.name, amount);
    if (range !== undefined) return range;
    this.#credited.set(coin.spec.name, this.credited(coin.spec.name) + BigInt(amount));
    return undefined;
  }

  /** The venue's holdings from outside (exact-range.ts): funds' net credits and the pool's funding. */
  readonly #outside: OutsideHoldings = {
    funds: (coin) => this.credited(coin) - this.withdrawn(coin),
    pool: (coin) => this.#ledger.poolFunded(coin),
  };

  /** Deposits credited less settled withdrawals of `coin`: for the lending pool's range check (exact-range.ts). */
  netCredited(coin: string): bigint {
    return this.#outside.funds(coin);
  }

  #depositUpdated(d: DepositRecord): void {
    d.time = this.#time;
    this.#events.push({ type: 'DepositUpdated', ...d });
  }

  #withdrawalUpdated(w: WithdrawalRecord): void {
    w.time = this.#time;
    if (isPendingWithdrawal(w.state)) this.#pending.add(w.withdrawalId);
    else this.#pending.delete(w.withdrawalId);
    this.#events.push({ type: 'WithdrawalUpdated', ...w });
  }

  // ───────────────────────────── deposits ─────────────────────────────

  /**
   * CreditDeposit (operator), applied once per depositId: a same-content repeat is OK with
   * `duplicate`; other content is DUPLICATE_REFERENCE. Results also: INVALID_PARAMETER (id),
   * USER_NOT_FOUND, UNKNOWN_COIN, RETIRED_COIN_NAME, INVALID_AMOUNT, VALUE_OUT_OF_RANGE (the venue's
   * net holdings of a coin stay exact, which bounds every balance and every sum of balances).
   * Events: BalanceChanged (deposit), DepositUpdated (credited).
   */
  #creditDeposit(cmd: CreditDeposit): ApplyResult {
    const id = cmd.depositId;
    if (
      typeof id !== 'string' ||
      id.length === 0 ||
      id.length > MAX_REFERENCE_LENGTH ||
      RESERVED_DEPOSIT_ID.test(id)
    ) {
      return refused(
        'INVALID_PARAMETER',
        `business id must be 1 to ${MAX_REFERENCE_LENGTH} characters, not starting with chain: or internal:`,
      );
    }
    const coin = this.#userCoin(cmd.userId, cmd.coin);
    if ('result' in coin) return coin;
    const bad = this.#amount(cmd.amount);
    if (bad !== undefined) return bad;
    const seen = this.#deposits.get(id);
    if (seen !== undefined) {
      const same = seen.userId === cmd.userId && seen.coin === cmd.coin && seen.amount === cmd.amount;
      return same ? duplicate() : refused('DUPLICATE_REFERENCE');
    }
    const range = this.#creditFromOutside(coin, cmd.amount);
    if (range !== undefined) return range;
    const record: DepositRecord = {
      depositId: id,
      userId: cmd.userId,
      coin: cmd.coin,
      chain: '',
      txHash: '',
      address: '',
      amount: cmd.amount,
      confirmations: 0,
      state: 'credited',
      itransfer: false,
      note: typeof cmd.remark === 'string' ? cmd.remark.slice(0, MAX_NOTE_LENGTH) : '',
      time: this.#time,
    };
    this.#deposits.set(id, record);
    this.#ledger.change(cmd.userId, coin, cmd.amount, 0, 'deposit', id);
    this.#depositUpdated(record);
    return this.#done();
  }

  /**
   * AssignDepositAddress: one address per user, coin and chain, never shared (on a memo chain:
   * the chain's account and a memo of the user's own). A repeat of the same address is OK with
   * `duplicate`. Results also: USER_NOT_FOUND, UNKNOWN_COIN, INVALID_PARAMETER (chain, address or
   * memo shape), DEPOSIT_DISABLED, INVALID_STATE (the user has another address there),
   * DUPLICATE_REFERENCE (the address is another user's). Event: DepositAddressAssigned.
   */
  #assignDepositAddress(cmd: AssignDepositAddress): ApplyResult {
    const coin = this.#userCoin(cmd.userId, cmd.coin);
    if ('result' in coin) return coin;
    const chain = this.#chainOf(cmd.coin, cmd.chain);
    if ('result' in chain) return chain;
    const parts =
      typeof cmd.address === 'string' && typeof cmd.memo === 'string'
        ? splitAddress(joinAddress(cmd.address, cmd.memo), chain.memo)
        : undefined;
    if (parts === undefined || parts.memo !== cmd.memo) {
      return refused(
        'INVALID_PARAMETER',
        chain.memo
          ? `chain ${chain.name} needs an account and a memo`
          : `chain ${chain.name} takes an address without memo`,
      );
    }
    if (!coin.spec.canDeposit || !chain.canDeposit) {
      return refused('DEPOSIT_DISABLED', `deposits of ${cmd.coin} on ${chain.name} are switched off`);
    }
    const key = `${cmd.userId}:${cmd.coin}:${chain.name}`;
    const existing = this.#addresses.get(key);
    if (existing !== undefined) {
      return existing.address === cmd.address && existing.memo === cmd.memo
        ? duplicate()
        : refused('INVALID_STATE', `the user already has a ${cmd.coin} address on ${chain.name}`);
    }
    const ownerKey = `${cmd.coin}:${chain.name}:${cmd.address}:${cmd.memo}`;
    if (this.#owners.has(ownerKey))
      return refused('DUPLICATE_REFERENCE', 'the address belongs to another user');
    const view = { coin: cmd.coin, chain: chain.name, address: cmd.address, memo: cmd.memo };
    this.#addresses.set(key, view);
    this.#owners.set(ownerKey, cmd.userId);
    this.#events.push({ type: 'DepositAddressAssigned', userId: cmd.userId, ...view, time: this.#time });
    return this.#done();
  }

  /**
   * ReportDeposit, applied once per (coin, chain, txHash, output): the first report creates the
   * record (confirming); later reports move its
   * confirmations; at the chain's required confirmations it is credited, or a report of failure
   * fails it. A report that changes nothing, or comes after the record is final, is OK with
   * `duplicate`. Results also: UNKNOWN_COIN, INVALID_PARAMETER (chain, shape), INVALID_AMOUNT,
   * UNKNOWN_REFERENCE (no user's deposit address), DUPLICATE_REFERENCE (the same output reported
   * with another address or amount), VALUE_OUT_OF_RANGE. Events: [BalanceChanged (deposit)],
   * DepositUpdated.
   */
  #reportDeposit(cmd: ReportDeposit): ApplyResult {
    const coin = typeof cmd.coin === 'string' ? this.#ledger.coin(cmd.coin) : undefined;
    if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${String(cmd.coin)}'`);
    const chain = this.#chainOf(cmd.coin, cmd.chain);
    if ('result' in chain) return chain;
    if (typeof cmd.txHash !== 'string' || !TX_HASH.test(cmd.txHash))
      return refused('INVALID_PARAMETER', 'txHash must be 8 to 100 letters or digits');
    if (!Number.isSafeInteger(cmd.output) || cmd.output < 0)
      return refused('INVALID_PARAMETER', 'output must be an integer ≥ 0');
    if (!Number.isSafeInteger(cmd.confirmations) || cmd.confirmations < 0)
      return refused('INVALID_PARAMETER', 'confirmations must be an integer ≥ 0');
    if (typeof cmd.failed !== 'boolean') return refused('INVALID_PARAMETER', 'failed must be a boolean');
    const bad = this.#amount(cmd.amount);
    if (bad !== undefined) return bad;
    const owner = this.#owners.get(`${cmd.coin}:${chain.name}:${String(cmd.address)}:${String(cmd.memo)}`);
    if (owner === undefined) return refused('UNKNOWN_REFERENCE', 'no user has this deposit address');
    const id = chainDepositId(cmd.coin, chain.name, cmd.txHash, cmd.output);
    const address = joinAddress(cmd.address, cmd.memo);
    const seen = this.#deposits.get(id);
    if (seen !== undefined) {
      if (seen.address !== address || seen.amount !== cmd.amount) return refused('DUPLICATE_REFERENCE');
      if (seen.state !== 'confirming') return duplicate();
      if (!cmd.failed && seen.confirmations === cmd.confirmations) return duplicate();
    }
    let state: DepositState = 'confirming';
    let note = '';
    if (cmd.failed) {
      state = 'failed';
      note = 'the transaction failed on chain';
    } else if (cmd.confirmations >= chain.confirmations) {
      const range = this.#creditFromOutside(coin, cmd.amount);
      if (range !== undefined) return range;
      state = 'credited';
      this.#ledger.change(owner, coin, cmd.amount, 0, 'deposit', id);
    }
    const record: DepositRecord = seen ?? {
      depositId: id,
      userId: owner,
      coin: cmd.coin,
      chain: chain.name,
      txHash: cmd.txHash,
      address,
      amount: cmd.amount,
      confirmations: 0,
      state,
      itransfer: false,
      note,
      time: this.#time,
    };
    record.confirmations = cmd.confirmations;
    record.state = state;
    record.note = note;
    this.#deposits.set(id, record);
    this.#depositUpdated(record);
    return this.#done();
  }

  // ───────────────────────────── address books and passwords ─────────────────────────────

  /**
   * AddWithdrawAddress: a new, unverified entry of the user's book (at most
   * MAX_WITHDRAW_ADDRESSES per coin); the same address again is OK with `duplicate`. Results also:
   * USER_NOT_FOUND, UNKNOWN_COIN, INVALID_PARAMETER (chain, address form), DUPLICATE_REFERENCE
   * (in the book for another chain), INVALID_STATE (book full). Event: WithdrawAddressUpdated.
   */
  #addWithdrawAddress(cmd: AddWithdrawAddress): ApplyResult {
    const coin = this.#userCoin(cmd.userId, cmd.coin);
    if ('result' in coin) return coin;
    const chain = this.#chainOf(cmd.coin, cmd.chain);
    if ('result' in chain) return chain;
    if (splitAddress(cmd.address, chain.memo) === undefined) {
      return refused(
        'INVALID_PARAMETER',
        chain.memo
          ? `a ${chain.name} address is <account>_<memo>`
          : `not an address: ${String(cmd.address).slice(0, 40)}`,
      );
    }
    const key = `${cmd.userId}:${cmd.coin}`;
    const book = this.#books.get(key) ?? [];
    const existing = book.find((e) => e.address === cmd.address);
    if (existing !== undefined) {
      return existing.chain === chain.name
        ? duplicate()
        : refused('DUPLICATE_REFERENCE', `the address is in the book for chain ${existing.chain}`);
    }
    if (book.length >= MAX_WITHDRAW_ADDRESSES) {
      return refused('INVALID_STATE', `at most ${MAX_WITHDRAW_ADDRESSES} withdrawal addresses per coin`);
    }
    const entry = { chain: chain.name, address: cmd.address, verified: false };
    book.push(entry);
    this.#books.set(key, book);
    this.#withdrawAddressUpdated(cmd.userId, cmd.coin, entry);
    return this.#done();
  }

  /**
   * VerifyWithdrawAddress: withdrawals may go to the address from now on; verifying it again is
   * OK with `duplicate`. Results also: USER_NOT_FOUND, UNKNOWN_COIN, UNKNOWN_REFERENCE (not in the
   * book). Event: WithdrawAddressUpdated.
   */
  #verifyWithdrawAddress(cmd: VerifyWithdrawAddress): ApplyResult {
    const coin = this.#userCoin(cmd.userId, cmd.coin);
    if ('result' in coin) return coin;
    const entry = this.#books.get(`${cmd.userId}:${cmd.coin}`)?.find((e) => e.address === cmd.address);
    if (entry === undefined)
      return refused('UNKNOWN_REFERENCE', `the address is not in the user's ${cmd.coin} book`);
    if (entry.verified) return duplicate();
    entry.verified = true;
    this.#withdrawAddressUpdated(cmd.userId, cmd.coin, entry);
    return this.#done();
  }

  #withdrawAddressUpdated(userId: number, coin: string, e: WithdrawAddressRecord): void {
    this.#events.push({ type: 'WithdrawAddressUpdated', userId, coin, ...e, time: this.#time });
  }

  /**
   * SetFundPassword: stores the hash and clears failures and any lock (the operator resets it).
   * Results also: USER_NOT_FOUND, INVALID_PARAMETER (hash). Event: FundPasswordSet.
   */
  #setFundPassword(cmd: SetFundPassword): ApplyResult {
    if (!this.#ledger.hasUser(cmd.userId)) return refused('USER_NOT_FOUND');
    if (typeof cmd.hash !== 'string' || cmd.hash.length === 0 || cmd.hash.length > MAX_HASH_LENGTH)
      return refused('INVALID_PARAMETER', `hash must be 1 to ${MAX_HASH_LENGTH} characters`);
    this.#passwords.set(cmd.userId, { hash: cmd.hash, failures: [], lockedUntil: 0, pending: [] });
    this.#events.push({ type: 'FundPasswordSet', userId: cmd.userId, time: this.#time });
    return this.#done();
  }

  /**
   * RecordFundPasswordFailure, by its `attempt`:
   * - `begin`: takes an attempt at the time of the command. Failures and pending attempts older
   *   than FUND_PASSWORD_WINDOW_MS no longer count; FUND_PASSWORD_LOCKED while locked, or when
   *   they already number FUND_PASSWORD_MAX_FAILURES. No event.
   * - `right`: the oldest pending attempt ends without counting. No event.
   * - `wrong` (or none): the oldest pending attempt, if any, ends as one more wrong attempt; the
   *   FUND_PASSWORD_MAX_FAILURES-th within the window locks withdrawals for FUND_PASSWORD_LOCK_MS
   *   (the count starts again after it). Results also: INVALID_STATE (already locked). Event:
   *   FundPasswordFailed.
   * Results also: USER_NOT_FOUND, INVALID_STATE (no password set), INVALID_PARAMETER (attempt).
   */
  #recordFundPasswordFailure(cmd: RecordFundPasswordFailure): ApplyResult {
    if (!this.#ledger.hasUser(cmd.userId)) return refused('USER_NOT_FOUND');
    const p = this.#passwords.get(cmd.userId);
    if (p === undefined) return refused('INVALID_STATE', 'the user has no fund password');
    const since = this.#time - FUND_PASSWORD_WINDOW_MS;
    if (cmd.attempt === 'begin') {
      if (p.lockedUntil > this.#time) return refused('FUND_PASSWORD_LOCKED');
      const failures = p.failures.filter((t) => t > since);
      const pending = p.pending.filter((t) => t > since);
      if (failures.length + pending.length >= FUND_PASSWORD_MAX_FAILURES) {
        return refused(
          'FUND_PASSWORD_LOCKED',
          `${FUND_PASSWORD_MAX_FAILURES} fund password attempts within 24 hours are wrong or still being checked`,
        );
      }
      p.failures = failures;
      p.pending = [...pending, this.#time];
      return this.#done();
    }
    if (cmd.attempt === 'right') {
      p.pending.shift();
      return this.#done();
    }
    if (cmd.attempt !== undefined && cmd.attempt !== 'wrong')
      return refused('INVALID_PARAMETER', 'attempt must be begin, right or wrong');
    if (p.lockedUntil > this.#time) return refused('INVALID_STATE', 'withdrawals are locked already');
    p.pending.shift();
    const failures = p.failures.filter((t) => t > since);
    failures.push(this.#time);
    const locks = failures.length >= FUND_PASSWORD_MAX_FAILURES;
    if (locks) p.lockedUntil = this.#time + FUND_PASSWORD_LOCK_MS;
    p.failures = locks ? [] : failures;
    this.#events.push({
      type: 'FundPasswordFailed',
      userId: cmd.userId,
      failures: failures.length,
      lockedUntil: locks ? p.lockedUntil : 0,
      time: this.#time,
    });
    return this.#done();
  }

  // ───────────────────────────── withdrawals ─────────────────────────────

  /**
   * RequestWithdrawal. Checks, in order: user, coin, amount, fee, itransfer; the address is a
   * verified entry of the user's book (which names the chain); the coin's and the chain's
   * withdrawal switches; a fund password set and not locked; not the user's own deposit address;
   * the fee (the chain's withdrawFee; an internal transfer may also state 0); the chain's
   * minWithdraw; the daily limit; the balance (amount + fee charged).
   *
   * Internal (itransfer and the address is another user's deposit address): the amount moves at
   * once without a fee. Events: BalanceChanged (transferOut), BalanceChanged (transferIn),
   * WithdrawalUpdated (succeeded), DepositUpdated (credited, on the receiving side).
   * Otherwise: amount + fee are frozen; approved at once up to the coin's autoApproveLimit.
   * Events: BalanceChanged (freeze), WithdrawalUpdated (submitted or approved).
   *
   * Results: OK with `withdrawalId`; USER_NOT_FOUND, UNKNOWN_COIN, RETIRED_COIN_NAME,
   * INVALID_AMOUNT, INVALID_PARAMETER, WITHDRAW_ADDRESS_UNVERIFIED, WITHDRAW_DISABLED,
   * FUND_PASSWORD_WRONG (none set), FUND_PASSWORD_LOCKED, WRONG_WITHDRAW_FEE, BELOW_MIN_WITHDRAW,
   * DAILY_WITHDRAW_LIMIT, INSUFFICIENT_BALANCE.
   */
  #requestWithdrawal(cmd: RequestWithdrawal): ApplyResult {
    const plan = this.#planWithdrawal(cmd, this.#time);
    if ('result' in plan) return plan;
    const { coin, chain, entry, receiver, internal, fee, funds, day, usedToday } = plan;
    const total = cmd.amount + fee;
    const id = String(this.#nextWithdrawalId++);
    this.#daily.set(`${cmd.userId}:${cmd.coin}`, { day, used: usedToday + cmd.amount });
    const record: WithdrawalRecord = {
      withdrawalId: id,
      userId: cmd.userId,
      coin: cmd.coin,
      chain: chain.name,
      address: entry.address,
      amount: cmd.amount,
      fee,
      state: 'submitted',
      txHash: '',
      confirmations: 0,
      itransfer: internal,
      reason: '',
      submitTime: this.#time,
      time: this.#time,
    };
    this.#withdrawals.set(id, record);
    if (internal) {
      this.#ledger.change(cmd.userId, coin, -cmd.amount, 0, 'transferOut', id);
      this.#ledger.change(receiver, coin, cmd.amount, 0, 'transferIn', id);
      record.state = 'succeeded';
      this.#withdrawalUpdated(record);
      const deposit: DepositRecord = {
        depositId: internalDepositId(id),
        userId: receiver,
        coin: cmd.coin,
        chain: chain.name,
        txHash: '',
        address: entry.address,
        amount: cmd.amount,
        confirmations: 0,
        state: 'credited',
        itransfer: true,
        note: `internal transfer (withdrawal ${id})`,
        time: this.#time,
      };
      this.#deposits.set(deposit.depositId, deposit);
      this.#depositUpdated(deposit);
    } else {
      this.#ledger.change(cmd.userId, coin, -total, total, 'freeze', id);
      if (cmd.amount <= funds.autoApproveLimit) record.state = 'approved';
      this.#withdrawalUpdated(record);
    }
    return this.#done({ withdrawalId: id });
  }

  /** Every check of a RequestWithdrawal at `time`, in order; what it would do, or the refusal. */
  #planWithdrawal(cmd: RequestWithdrawal, time: number): WithdrawalPlan | ApplyResult {
    const coin = this.#userCoin(cmd.userId, cmd.coin);
    if ('result' in coin) return coin;
    if (this.#ledger.isFrozen(cmd.userId)) return refused('ACCOUNT_FROZEN');
    const bad = this.#amount(cmd.amount);
    if (bad !== undefined) return bad;
    if (!Number.isSafeInteger(cmd.fee) || cmd.fee < 0) return refused('INVALID_PARAMETER', 'fee must be ≥ 0');
    if (typeof cmd.itransfer !== 'boolean')
      return refused('INVALID_PARAMETER', 'itransfer must be a boolean');
    const entry = this.#books.get(`${cmd.userId}:${cmd.coin}`)?.find((e) => e.address === cmd.address);
    if (entry === undefined || !entry.verified) {
      return refused(
        'WITHDRAW_ADDRESS_UNVERIFIED',
        `${UNVERIFIED_ADDRESS_TEXT} (the address ${entry === undefined ? `is not in this account's ${cmd.coin} withdrawal book` : 'is not verified yet'})`,
      );
    }
    const chain = this.chain(cmd.coin, entry.chain) as ChainSpec;
    if (!coin.spec.canWithdraw || !chain.canWithdraw) {
      return refused('WITHDRAW_DISABLED', `withdrawals of ${cmd.coin} on ${chain.name} are switched off`);
    }
    const password = this.#passwords.get(cmd.userId);
    if (password === undefined)
      return refused('FUND_PASSWORD_WRONG', 'no fund password is set for this account');
    if (password.lockedUntil > time) return refused('FUND_PASSWORD_LOCKED');
    const to = splitAddress(entry.address, chain.memo) as { address: string; memo: string };
    const receiver = this.#owners.get(`${cmd.coin}:${chain.name}:${to.address}:${to.memo}`);
    if (receiver === cmd.userId)
      return refused('INVALID_PARAMETER', 'the address is your own deposit address');
    const internal = cmd.itransfer && receiver !== undefined;
    const unit = (units: number): string => `${formatUnitsTrim(units, coin.spec.unitDecimal)} ${cmd.coin}`;
    if (cmd.fee !== chain.withdrawFee && !(internal && cmd.fee === 0)) {
      return refused(
        'WRONG_WITHDRAW_FEE',
        `fees must be ${unit(chain.withdrawFee)}, the ${chain.name} withdrawal fee`,
      );
    }
    if (cmd.amount < chain.minWithdraw) {
      return refused(
        'BELOW_MIN_WITHDRAW',
        `the smallest ${chain.name} withdrawal is ${unit(chain.minWithdraw)}`,
      );
    }
    const funds = this.#configByCoin.get(cmd.coin) as CoinFunds;
    const day = Math.floor(time / DAY_MS);
    const usedToday = this.withdrawnOnDay(cmd.userId, cmd.coin, time);
    const own = this.#userLimits.get(`${cmd.userId}:${cmd.coin}`);
    const limit = own ?? funds.dailyWithdrawLimit;
    if (usedToday + cmd.amount > limit) {
      return refused(
        'DAILY_WITHDRAW_LIMIT',
        `the daily limit${own === undefined ? '' : ' the operator set for this account'} is ${unit(limit)}; ${unit(usedToday)} withdrawn today`,
      );
    }
    const fee = internal ? 0 : chain.withdrawFee;
    const total = cmd.amount + fee;
    const available = this.#ledger.available(cmd.userId, coin);
    if (!Number.isSafeInteger(total) || available < total) {
      const required = Number.isSafeInteger(total) ? unit(total) : `more than ${unit(available)}`;
      const parts = fee > 0 ? ` (amount ${unit(cmd.amount)} + fee ${unit(fee)})` : '';
      return refused(
        'INSUFFICIENT_BALANCE',
        `insufficient balance: available ${unit(available)}, required ${required}${parts}`,
      );
    }
    return {
      coin,
      chain,
      entry,
      receiver: internal ? (receiver as number) : 0,
      internal,
      fee,
      funds,
      day,
      usedToday,
    };
  }

  /**
   * What RequestWithdrawal would answer at `time`, without applying it: the refusal, or
   * undefined when it would be accepted. The edge asks before it checks the fund password, so
   * that a request refused anyway does not cost a password attempt.
   */
  checkWithdrawal(cmd: RequestWithdrawal, time: number): ApplyResult | undefined {
    const plan = this.#planWithdrawal(cmd, time);
    return 'result' in plan ? plan : undefined;
  }

  /** The withdrawal a command names, or UNKNOWN_REFERENCE. */
  #withdrawalOf(id: string): WithdrawalRecord | ApplyResult {
    const w = typeof id === 'string' ? this.#withdrawals.get(id) : undefined;
    return w ?? refused('UNKNOWN_REFERENCE', `no withdrawal '${String(id)}'`);
  }

  #tooLate(w: WithdrawalRecord, what: string): ApplyResult {
    return refused('INVALID_STATE', `withdrawal ${w.withdrawalId} is ${w.state}: it cannot be ${what}`);
  }

  /** ApproveWithdrawal: submitted → approved (again: `duplicate`). Results: UNKNOWN_REFERENCE, INVALID_STATE. */
  #approveWithdrawal(cmd: ApproveWithdrawal): ApplyResult {
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (w.state === 'approved') return duplicate();
    if (w.state !== 'submitted') return this.#tooLate(w, 'approved');
    w.state = 'approved';
    this.#withdrawalUpdated(w);
    return this.#done();
  }

  /** Releases a pending withdrawal's frozen funds and gives its amount back to the day's limit. */
  #release(w: WithdrawalRecord, state: 'failed' | 'cancelled', reason: string): void {
    const coin = this.#ledger.coin(w.coin) as LedgerCoin;
    const total = w.amount + w.fee;
    this.#ledger.change(w.userId, coin, total, -total, 'unfreeze', w.withdrawalId);
    const daily = this.#daily.get(`${w.userId}:${w.coin}`);
    if (daily !== undefined && daily.day === Math.floor(w.submitTime / DAY_MS)) daily.used -= w.amount;
    w.state = state;
    w.reason = reason;
    this.#withdrawalUpdated(w);
  }

  /**
   * CancelWithdrawal: submitted or approved → cancelled, funds released (again: `duplicate`).
   * With `userId`, only the owner may (another user's id is UNKNOWN_REFERENCE). Results:
   * UNKNOWN_REFERENCE, INVALID_STATE (sending or later). Events: BalanceChanged (unfreeze),
   * WithdrawalUpdated (cancelled).
   */
  #cancelWithdrawal(cmd: CancelWithdrawal): ApplyResult {
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (cmd.userId !== undefined && cmd.userId !== w.userId)
      return refused('UNKNOWN_REFERENCE', `no withdrawal '${cmd.withdrawalId}'`);
    if (w.state === 'cancelled') return duplicate();
    if (w.state !== 'submitted' && w.state !== 'approved') return this.#tooLate(w, 'cancelled');
    this.#release(
      w,
      'cancelled',
      cmd.userId === undefined ? 'cancelled by the operator' : 'cancelled by the user',
    );
    return this.#done();
  }

  /** SendWithdrawal: approved → sending (again: `duplicate`). Results: UNKNOWN_REFERENCE, INVALID_STATE. */
  #sendWithdrawal(cmd: SendWithdrawal): ApplyResult {
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (w.state === 'sending') return duplicate();
    if (w.state !== 'approved') return this.#tooLate(w, 'sent');
    w.state = 'sending';
    this.#withdrawalUpdated(w);
    return this.#done();
  }

  /**
   * MarkWithdrawalSent: sending → sent with its transaction hash (the same hash again, later:
   * `duplicate`). Results: INVALID_PARAMETER (hash), UNKNOWN_REFERENCE, INVALID_STATE.
   */
  #markWithdrawalSent(cmd: MarkWithdrawalSent): ApplyResult {
    if (typeof cmd.txHash !== 'string' || !TX_HASH.test(cmd.txHash))
      return refused('INVALID_PARAMETER', 'txHash must be 8 to 100 letters or digits');
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (w.txHash === cmd.txHash) return duplicate();
    if (w.state !== 'sending') return this.#tooLate(w, 'marked sent');
    w.state = 'sent';
    w.txHash = cmd.txHash;
    this.#withdrawalUpdated(w);
    return this.#done();
  }

  /**
   * ConfirmWithdrawal: a sent withdrawal's confirmations; from one on it is confirmed, and at the
   * chain's required number it has succeeded: amount and fee leave the user's frozen balance, the
   * fee becomes fee income. The same count again, or any after success: `duplicate`. Results:
   * INVALID_PARAMETER, UNKNOWN_REFERENCE, INVALID_STATE. Events: [BalanceChanged (withdraw),
   * BalanceChanged (withdrawFee)], WithdrawalUpdated.
   */
  #confirmWithdrawal(cmd: ConfirmWithdrawal): ApplyResult {
    if (!Number.isSafeInteger(cmd.confirmations) || cmd.confirmations < 0)
      return refused('INVALID_PARAMETER', 'confirmations must be an integer ≥ 0');
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (w.state === 'succeeded') return duplicate();
    if (w.state !== 'sent' && w.state !== 'confirmed') return this.#tooLate(w, 'confirmed');
    if (w.confirmations === cmd.confirmations) return duplicate();
    const chain = this.chain(w.coin, w.chain) as ChainSpec;
    w.confirmations = cmd.confirmations;
    if (cmd.confirmations >= chain.confirmations) {
      const coin = this.#ledger.coin(w.coin) as LedgerCoin;
      this.#ledger.change(w.userId, coin, 0, -w.amount, 'withdraw', w.withdrawalId);
      if (w.fee > 0) {
        this.#ledger.change(w.userId, coin, 0, -w.fee, 'withdrawFee', w.withdrawalId);
        this.#ledger.addFeeIncome(coin, w.fee);
      }
      this.#withdrawn.set(w.coin, (this.#withdrawn.get(w.coin) ?? 0n) + BigInt(w.amount));
      w.state = 'succeeded';
    } else {
      w.state = cmd.confirmations > 0 ? 'confirmed' : 'sent';
    }
    this.#withdrawalUpdated(w);
    return this.#done();
  }

  /**
   * FailWithdrawal: a pending withdrawal fails, its funds released (again: `duplicate`). Results:
   * INVALID_PARAMETER (reason), UNKNOWN_REFERENCE, INVALID_STATE (already ended). Events:
   * BalanceChanged (unfreeze), WithdrawalUpdated (failed).
   */
  #failWithdrawal(cmd: FailWithdrawal): ApplyResult {
    if (typeof cmd.reason !== 'string' || cmd.reason.length === 0 || cmd.reason.length > MAX_NOTE_LENGTH)
      return refused('INVALID_PARAMETER', `reason must be 1 to ${MAX_NOTE_LENGTH} characters`);
    const w = this.#withdrawalOf(cmd.withdrawalId);
    if ('result' in w) return w;
    if (w.state === 'failed') return duplicate();
    if (!isPendingWithdrawal(w.state)) return this.#tooLate(w, 'failed');
    this.#release(w, 'failed', cmd.reason);
    return this.#done();
  }

  // ───────────────────────────── reads ─────────────────────────────

  config(): readonly CoinFunds[] {
    return this.#config;
  }

  coinFunds(coin: string): CoinFunds | undefined {
    return this.#configByCoin.get(coin);
  }

  chain(coin: string, chain: string): ChainSpec | undefined {
    return this.#configByCoin.get(coin)?.chains.find((c) => c.name === chain);
  }

  depositAddresses(userId: number, coin?: string): DepositAddressView[] {
    const out: DepositAddressView[] = [];
    for (const f of this.#config) {
      if (coin !== undefined && f.coin !== coin) continue;
      for (const c of f.chains) {
        const a = this.#addresses.get(`${userId}:${f.coin}:${c.name}`);
        if (a !== undefined) out.push(a);
      }
    }
    return out;
  }

  depositAddressOwner(coin: string, chain: string, address: string, memo: string): number | undefined {
    return this.#owners.get(`${coin}:${chain}:${address}:${memo}`);
  }

  withdrawAddresses(userId: number, coin: string): WithdrawAddressView[] {
    return (this.#books.get(`${userId}:${coin}`) ?? []).map((e) => ({ coin, ...e }));
  }

  fundPassword(userId: number): FundPasswordView | undefined {
    const p = this.#passwords.get(userId);
    return p === undefined
      ? undefined
      : { hash: p.hash, failures: [...p.failures], lockedUntil: p.lockedUntil, pending: [...p.pending] };
  }

  deposit(depositId: string): DepositView | undefined {
    const d = this.#deposits.get(depositId);
    return d === undefined ? undefined : { ...d };
  }

  withdrawal(withdrawalId: string): WithdrawalView | undefined {
    const w = this.#withdrawals.get(withdrawalId);
    return w === undefined ? undefined : { ...w };
  }

  withdrawals(pendingOnly: boolean): WithdrawalView[] {
    const ids = pendingOnly ? [...this.#pending] : [...this.#withdrawals.keys()];
    return ids
      .map((id) => ({ ...(this.#withdrawals.get(id) as WithdrawalRecord) }))
      .sort((a, b) => Number(a.withdrawalId) - Number(b.withdrawalId));
  }

  deposits(): DepositView[] {
    return [...this.#deposits.values()].map((d) => ({ ...d })).sort((a, b) => a.time - b.time);
  }

  withdrawnOnDay(userId: number, coin: string, time: number): CoinUnits {
    const daily = this.#daily.get(`${userId}:${coin}`);
    return daily !== undefined && daily.day === Math.floor(time / DAY_MS) ? daily.used : 0;
  }

  // ───────────────────────────── engine support ─────────────────────────────

  /** Calls `hold` with what each withdrawal in progress keeps frozen (amount + fee). */
  forEachHold(hold: (userId: number, coin: string, units: CoinUnits) => void): void {
    for (const id of this.#pending) {
      const w = this.#withdrawals.get(id) as WithdrawalRecord;
      hold(w.userId, w.coin, w.amount + w.fee);
    }
  }

  /** Lifetime credits from outside (operator and chain deposits) of a coin. */
  credited(coin: string): bigint {
    return this.#credited.get(coin) ?? 0n;
  }

  /** Lifetime settled withdrawals (amounts, fees excluded) of a coin. */
  withdrawn(coin: string): bigint {
    return this.#withdrawn.get(coin) ?? 0n;
  }

  /**
   * Checks the funds state and throws on the first broken rule: the address maps agree both
   * ways; the pending set is exactly the withdrawals in progress; lifetime credits are the sum
   * of credited deposits from outside and lifetime withdrawals the sum of succeeded external
   * withdrawals (so nothing was credited or paid twice); daily usage is never negative.
   */
  assertInvariants(): void {
    if (this.#owners.size !== this.#addresses.size)
      throw new Error(`${this.#addresses.size} deposit addresses but ${this.#owners.size} owners`);
    for (const [key, a] of this.#addresses) {
      const userId = Number(key.slice(0, key.indexOf(':')));
      if (this.#owners.get(`${a.coin}:${a.chain}:${a.address}:${a.memo}`) !== userId)
        throw new Error(`deposit address ${a.address} of user ${userId}: owner map disagrees`);
    }
    const credited = new Map<string, bigint>();
    for (const d of this.#deposits.values()) {
      if (d.state === 'credited' && !d.itransfer)
        credited.set(d.coin, (credited.get(d.coin) ?? 0n) + BigInt(d.amount));
    }
    const withdrawn = new Map<string, bigint>();
    for (const w of this.#withdrawals.values()) {
      if (isPendingWithdrawal(w.state) !== this.#pending.has(w.withdrawalId))
        throw new Error(`withdrawal ${w.withdrawalId} (${w.state}) is misfiled as pending or not`);
      if (w.state === 'succeeded' && !w.itransfer)
        withdrawn.set(w.coin, (withdrawn.get(w.coin) ?? 0n) + BigInt(w.amount));
    }
    for (const coin of new Set([
      ...credited.keys(),
      ...this.#credited.keys(),
      ...withdrawn.keys(),
      ...this.#withdrawn.keys(),
    ])) {
      if ((credited.get(coin) ?? 0n) !== this.credited(coin))
        throw new Error(
          `${coin}: credited ${this.credited(coin)} but deposits sum to ${credited.get(coin) ?? 0n}`,
        );
      if ((withdrawn.get(coin) ?? 0n) !== this.withdrawn(coin))
        throw new Error(
          `${coin}: withdrawn ${this.withdrawn(coin)} but withdrawals sum to ${withdrawn.get(coin) ?? 0n}`,
        );
    }
    for (const [key, d] of this.#daily) if (d.used < 0) throw new Error(`daily usage ${key} is negative`);
  }

  /** The state as plain data in canonical order (keys sorted; books and records by id). */
  snapshot(): FundsSnapshot {
    const addresses: FundsSnapshot['addresses'] = [...this.#addresses]
      .sort(byKey)
      .map(([key, a]) => [Number(key.slice(0, key.indexOf(':'))), a.coin, a.chain, a.address, a.memo]);
    const withdrawAddresses: FundsSnapshot['withdrawAddresses'] = [];
    for (const [key, book] of [...this.#books].sort(byKey)) {
      const i = key.indexOf(':');
      for (const e of book)
        withdrawAddresses.push([Number(key.slice(0, i)), key.slice(i + 1), e.chain, e.address, e.verified]);
    }
    const coins = [...new Set([...this.#credited.keys(), ...this.#withdrawn.keys()])].sort();
    return {
      config: this.#config.map((f) => ({ ...f, chains: f.chains.map((c) => ({ ...c })) })),
      nextWithdrawalId: this.#nextWithdrawalId,
      addresses,
      withdrawAddresses,
      passwords: [...this.#passwords]
        .sort((a, b) => a[0] - b[0])
        .map(([userId, p]): FundsSnapshot['passwords'][number] =>
          p.pending.length === 0
            ? [userId, p.hash, [...p.failures], p.lockedUntil]
            : [userId, p.hash, [...p.failures], p.lockedUntil, [...p.pending]],
        ),
      deposits: [...this.#deposits].sort(byKey).map(([, d]) => ({ ...d })),
      withdrawals: this.withdrawals(false),
      daily: [...this.#daily].sort(byKey).map(([key, d]) => {
        const i = key.indexOf(':');
        return [Number(key.slice(0, i)), key.slice(i + 1), d.day, d.used];
      }),
      totals: coins.map((c) => [c, String(this.credited(c)), String(this.withdrawn(c))]),
      ...(this.#userLimits.size > 0 && {
        userLimits: [...this.#userLimits].sort(byKey).map(([key, limit]): [number, string, number] => {
          const i = key.indexOf(':');
          return [Number(key.slice(0, i)), key.slice(i + 1), limit];
        }),
      }),
    };
  }

  /** Loads the state of a snapshot into these (fresh) funds, configured with `s.config`. */
  load(s: FundsSnapshot): void {
    this.#nextWithdrawalId = s.nextWithdrawalId;
    for (const [userId, coin, chain, address, memo] of s.addresses) {
      this.#addresses.set(`${userId}:${coin}:${chain}`, { coin, chain, address, memo });
      this.#owners.set(`${coin}:${chain}:${address}:${memo}`, userId);
    }
    for (const [userId, coin, chain, address, verified] of s.withdrawAddresses) {
      const key = `${userId}:${coin}`;
      const book = this.#books.get(key) ?? [];
      book.push({ chain, address, verified });
      this.#books.set(key, book);
    }
    for (const [userId, hash, failures, lockedUntil, pending = []] of s.passwords) {
      this.#passwords.set(userId, { hash, failures: [...failures], lockedUntil, pending: [...pending] });
    }
    for (const d of s.deposits) this.#deposits.set(d.depositId, { ...d });
    for (const w of s.withdrawals) {
      this.#withdrawals.set(w.withdrawalId, { ...w });
      if (isPendingWithdrawal(w.state)) this.#pending.add(w.withdrawalId);
    }
    for (const [userId, coin, day, used] of s.daily) this.#daily.set(`${userId}:${coin}`, { day, used });
    for (const [userId, coin, limit] of s.userLimits ?? []) this.#userLimits.set(`${userId}:${coin}`, limit);
    for (const [coin, credited, withdrawn] of s.totals) {
      this.#credited.set(coin, BigInt(credited));
      this.#withdrawn.set(coin, BigInt(withdrawn));
    }
  }
}
