/** @module naive-engine — a deliberately naive reference engine (linear scans, BigInt money). */
import type { ChainSpec, CoinFunds, DepositState, WithdrawalState } from '../../src/domain/chains.ts';
import type {
  AddSubUser,
  AddWithdrawAddress,
  ApproveWithdrawal,
  AssignDepositAddress,
  CancelAllOrdersAfter,
  CancelOrder,
  CancelWithdrawal,
  ConfirmWithdrawal,
  CreditDeposit,
  FailWithdrawal,
  MarkWithdrawalSent,
  OrderKind,
  PlaceOrder,
  PlaceOrderBatch,
  RecordFundPasswordFailure,
  RegisterUser,
  ReportDeposit,
  RequestWithdrawal,
  SendWithdrawal,
  SequencedCommand,
  SetFeePreference,
  SetFundPassword,
  SetMarketStatus,
  Side,
  TransferFunds,
  VerifyWithdrawAddress,
} from '../../src/domain/commands.ts';
import type { CancelReason } from '../../src/domain/events.ts';
import type { ResultName } from '../../src/domain/result-codes.ts';
import type { MarketSpec, VenueConfig } from '../../src/domain/specs.ts';
import { NaiveMargin, type NaiveLossOrder, type Pocket } from './naive-margin.ts';
import { NaiveRisk } from './naive-risk.ts';

/*
 * Everything here is written from the rules in src/domain/money.ts and the engine's doc comments,
 * without sharing code with src/engine: books are unsorted arrays searched linearly, every money
 * value is a bigint, and nothing is cached that could drift. Slow and obvious on purpose.
 */

const SELL = 0;
const BUY = 1;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MILLION = 1_000_000n;
const MAX_BATCH = 20;
const CLIENT_ID = /^[A-Za-z0-9]{4,36}$/;
const USER_NAME = /^[\w.@-]+$/;
const RETIRED = new Set(['bchabc', 'bchsv', 'hsr', 'nxwc']);
const DAY = 86_400_000;
const ADDRESS = /^[A-Za-z0-9.:-]{1,100}$/;
const MEMO = /^[A-Za-z0-9.-]{1,27}$/;
const HASH = /^[A-Za-z0-9]{8,100}$/;
const PASSWORD_WINDOW = 24 * 3_600_000;
const PASSWORD_LOCK = 24 * 3_600_000;

/** One fill as the reference saw it: the fields of the engine's TradeExecuted event. */
export interface NaiveTrade {
  readonly tradeId: number;
  readonly market: string;
  readonly price: number;
  readonly amount: number;
  readonly value: number;
  readonly takerSide: Side;
  readonly takerOrderId: number;
  readonly makerOrderId: number;
  readonly takerUserId: number;
  readonly makerUserId: number;
  readonly takerFee: number;
  readonly takerFeeCoin: string;
  readonly makerFee: number;
  readonly makerFeeCoin: string;
  readonly time: number;
}

/** What one command did: the result name, the trades, the orders cancelled (id, reason) in order. */
export interface NaiveOutcome {
  readonly result: ResultName;
  readonly trades: NaiveTrade[];
  readonly cancels: [number, CancelReason][];
  readonly orderId?: number;
  readonly orderIds?: number[];
  readonly userId?: number;
  readonly duplicate?: boolean;
  readonly deadline?: number;
  readonly withdrawalId?: string;
  readonly offerId?: number;
  readonly loanIds?: number[];
}

/** A resting order as the reference holds it, numbers converted for comparison. */
export interface NaiveOrderView {
  readonly id: number;
  readonly userId: number;
  readonly market: string;
  readonly side: Side;
  readonly price: number;
  readonly amount: number;
  readonly remaining: number;
  readonly filled: number;
  readonly filledValue: number;
  readonly fees: number;
  readonly platformFees: number;
}

interface Funds {
  available: bigint;
  frozen: bigint;
}

interface User {
  readonly id: number;
  readonly name: string;
  usePlatformCoin: boolean;
  readonly funds: Map<string, Funds>;
  /** A sub-account's main user (issue 33). */
  main?: number;
}

interface Market {
  spec: MarketSpec;
  readonly lotBase: bigint;
  readonly tickLotQuote: bigint;
  lastPrice: bigint;
  /** Resting orders in arrival order; priority is found by scanning. */
  readonly bids: Order[];
  readonly asks: Order[];
}

interface Order {
  readonly id: number;
  readonly userId: number;
  readonly market: Market;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: bigint;
  readonly amount: bigint;
  remaining: bigint;
  filled: bigint;
  filledValue: bigint;
  fees: bigint;
  platformFees: bigint;
  frozen: bigint;
  readonly usePlatformCoin: boolean;
  /** The account it pays from and settles in: 'spot' or a margin account (naive-margin.ts). */
  readonly acct: string;
  /** A forced liquidation's order: no trading fee as taker. */
  readonly liquidation: boolean;
}

interface Deposit {
  readonly userId: number;
  readonly coin: string;
  readonly address: string;
  readonly amount: bigint;
  confirmations: number;
  state: DepositState;
  /** The receiving side of an internal transfer: not money from outside. */
  readonly internal: boolean;
}

interface Withdrawal {
  readonly id: string;
  readonly userId: number;
  readonly coin: string;
  readonly chain: ChainSpec;
  readonly amount: bigint;
  readonly fee: bigint;
  state: WithdrawalState;
  txHash: string;
  confirmations: number;
  readonly internal: boolean;
  readonly day: number;
}

interface Owned {
  readonly userId: number;
  readonly coin: string;
  readonly chain: string;
  readonly address: string;
  /** Deposit addresses: the memo; book entries: ''. */
  readonly memo: string;
  verified: boolean;
}

interface Deadline {
  readonly userId: number;
  readonly market: string;
  deadline: number;
}

/** A fee price path step: value in `from` times num/den gives value in `to` (coins, not units). */
interface Leg {
  readonly from: string;
  readonly to: string;
  readonly num: bigint;
  readonly den: bigint;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const isPositiveSafe = (x: number): boolean => Number.isSafeInteger(x) && x > 0;
const toNumber = (x: bigint): number => {
  if (x < -MAX_SAFE || x > MAX_SAFE) throw new Error(`reference value ${x} is not a safe number`);
  return Number(x);
};

/** An order as the margin reference weighs its loss beyond the mark (naive-margin.ts). */
const lossOrder = (m: Market, side: Side, price: bigint, lots: bigint): NaiveLossOrder => ({
  market: m.spec.name,
  quote: m.spec.quote,
  buy: side === BUY,
  price,
  lots,
  tickLotQuote: m.tickLotQuote,
});

export class NaiveEngine {
  readonly #platformCoin: string;
  readonly #discount: bigint;
  readonly #cancelAllAfterMs: number;
  readonly #decimals = new Map<string, number>();
  readonly #coins: string[] = [];
  readonly #markets: Market[] = [];
  readonly #users = new Map<number, User>();
  readonly #clientIds = new Map<string, number>();
  readonly #deadlines: Deadline[] = [];
  readonly #fundsConfig: readonly CoinFunds[];
  readonly #canDeposit = new Map<string, boolean>();
  readonly #canWithdraw = new Map<string, boolean>();
  readonly #deposits = new Map<string, Deposit>();
  readonly #withdrawals: Withdrawal[] = [];
  readonly #depositAddresses: Owned[] = [];
  readonly #books: Owned[] = [];
  readonly #passwords = new Map<number, { failures: number[]; lockedUntil: number }>();
  readonly #feeIncome = new Map<string, bigint>();
  readonly #credited = new Map<string, bigint>();
  readonly #withdrawn = new Map<string, bigint>();
  #nextUserId = 1;
  #nextOrderId = 1;
  #nextTradeId = 1;
  #time = 0;
  /** The order `#submit` made last (a liquidation reads what it filled). */
  #lastSubmitted: Order | undefined;
  #trades: NaiveTrade[] = [];
  #cancels: [number, CancelReason][] = [];
  /** Margin accounts, lending, loans and interest (naive-margin.ts). */
  readonly margin: NaiveMargin;
  /** Marks, risk rates and notice flags of isolated accounts (naive-risk.ts). */
  readonly risk: NaiveRisk;

  constructor(config: VenueConfig) {
    this.#platformCoin = config.settings.platformCoin;
    this.#discount = BigInt(config.settings.platformFeeDiscount);
    this.#cancelAllAfterMs = config.settings.cancelAllAfterMs;
    this.#fundsConfig = config.funds ?? [];
    this.margin = new NaiveMargin({
      hasUser: (id) => this.#users.has(id),
      decimals: (coin) => this.#decimals.get(coin),
      market: (name) => {
        const m = this.#market(name);
        return (
          m && {
            base: m.spec.base,
            quote: m.spec.quote,
            priceScale: m.spec.priceScale,
            lastPrice: m.lastPrice,
          }
        );
      },
      firstQuote: () => this.#markets[0]?.spec.quote,
      limitMark: (name) => this.risk.limitMark(name, this.margin.time),
      fundsHeld: (coin) => this.#fundsHeld(coin),
      marketList: () =>
        this.#markets.map((m) => ({
          name: m.spec.name,
          base: m.spec.base,
          quote: m.spec.quote,
          priceScale: m.spec.priceScale,
        })),
      spot: (id, coin) => this.#funds(this.#users.get(id) as User, coin),
      coins: () => this.#coins,
      resting: (acct) => this.#restingOf(acct),
    });
    this.risk = new NaiveRisk({
      markets: () =>
        this.#markets.map((m) => ({
          name: m.spec.name,
          base: m.spec.base,
          quote: m.spec.quote,
          priceScale: m.spec.priceScale,
          lotUnits: m.lotBase,
          lastPrice: m.lastPrice,
          bestBid: this.#best(m.bids, BUY),
          bestAsk: this.#best(m.asks, SELL),
          minSize: BigInt(m.spec.minSize),
          tickLotQuote: m.tickLotQuote,
        })),
      markRule: config.settings.markRule ?? 'median',
      decimals: (coin) => this.#decimals.get(coin) as number,
      accounts: () => this.margin.accounts(),
      pocketOf: (account, coin) => this.margin.pocketOf(account, coin),
      trades: () => this.#trades,
      cancelAccountOrders: (account) => this.#cancelAccountOrders(account),
      liquidationOrder: (account, side, price, lots) => this.#liquidationOrder(account, side, price, lots),
      autoRepay: () => this.margin.autoRepay(),
      margin: this.margin,
    });
    for (const c of config.coins) {
      this.#decimals.set(c.name, c.unitDecimal);
      this.#coins.push(c.name);
      this.#feeIncome.set(c.name, 0n);
      this.#credited.set(c.name, 0n);
      this.#withdrawn.set(c.name, 0n);
      this.#canDeposit.set(c.name, c.canDeposit);
      this.#canWithdraw.set(c.name, c.canWithdraw);
    }
    for (const spec of config.markets) {
      const baseDec = this.#decimals.get(spec.base) as number;
      const quoteDec = this.#decimals.get(spec.quote) as number;
      this.#markets.push({
        spec: { ...spec },
        lotBase: pow10(baseDec - spec.amountScale),
        tickLotQuote: pow10(quoteDec - spec.priceScale - spec.amountScale),
        lastPrice: 0n,
        bids: [],
        asks: [],
      });
    }
  }

  /**
   * Applies one command, then (when accepted) the risk side's step. Throws for what it does not
   * model: coin and market upserts, API keys, forced liquidation.
   */
  apply(cmd: SequencedCommand): NaiveOutcome {
    this.#trades = [];
    this.#cancels = [];
    if (this.#locked(cmd)) return this.#refuse('INVALID_STATE');
    const r = this.#apply(cmd);
    if (r.result === 'OK') this.risk.afterCommand(cmd.time, cmd.type === 'FireTimers');
    return r;
  }

  /** Whether the command is the owner's on an isolated account locked by its liquidation (repayLock). */
  #locked(cmd: SequencedCommand): boolean {
    switch (cmd.type) {
      case 'PlaceOrder':
      case 'PlaceOrderBatch':
      case 'MarginTransfer':
      case 'Borrow':
      case 'RepayAll':
        return cmd.acctType === 1 && this.risk.isLocked(`i:${cmd.userId}:${cmd.market}`);
      case 'RepayLoan': {
        const b = this.margin.borrowerOf(cmd.loanId);
        return b !== undefined && b.startsWith(`i:${cmd.userId}:`) && this.risk.isLocked(b);
      }
      default:
        return false;
    }
  }

  /** A liquidation cancels every resting order of the account, oldest first. */
  #cancelAccountOrders(account: string): void {
    const victims = this.#markets
      .flatMap((m) => [...m.bids, ...m.asks])
      .filter((o) => o.acct === account)
      .sort((a, b) => a.id - b.id);
    for (const o of victims) this.#cancelResting(o, 'liquidation');
  }

  /**
   * A liquidation's order: IOC from the isolated account, no trading fee, no minimums; lots filled.
   * First the owner's resting orders in the market (any account) that it could reach are cancelled
   * (reason `liquidation`, oldest first), so self-trade prevention does not stop it at them.
   */
  #liquidationOrder(account: string, side: 'buy' | 'sell', price: bigint, lots: bigint): bigint {
    const [, user, name] = account.split(':');
    const market = this.#market(name ?? '') as Market;
    const s = side === 'buy' ? BUY : SELL;
    const victims = (s === BUY ? market.asks : market.bids)
      .filter((o) => o.userId === Number(user) && (s === BUY ? o.price <= price : o.price >= price))
      .sort((a, b) => a.id - b.id);
    for (const o of victims) this.#cancelResting(o, 'liquidation');
    const cost = s === BUY ? price * lots * market.tickLotQuote : lots * market.lotBase;
    this.#submit(
      this.#users.get(Number(user)) as User,
      market,
      s,
      'ioc',
      Number(price),
      Number(lots),
      cost,
      '',
      account,
      false,
      true,
    );
    return (this.#lastSubmitted as Order).filled;
  }

  /** The best price of a book side (highest bid, lowest ask), undefined when empty. */
  #best(orders: readonly Order[], side: Side): bigint | undefined {
    let best: bigint | undefined;
    for (const o of orders)
      if (best === undefined || (side === BUY ? o.price > best : o.price < best)) best = o.price;
    return best;
  }

  #apply(cmd: SequencedCommand): NaiveOutcome {
    this.#time = cmd.time;
    this.margin.time = cmd.time;
    switch (cmd.type) {
      case 'MarginTransfer':
        return this.#margin(
          this.margin.transfer(cmd.userId, cmd.direction, cmd.acctType, cmd.market, cmd.coin, cmd.amount),
        );
      case 'FundLendingPool':
        return this.#margin(
          this.margin.fundPool(cmd.fundingId, cmd.coin, cmd.amount, cmd.dailyRatePpm, cmd.days),
        );
      case 'PlaceLoanOffer':
        return this.#margin(
          this.margin.placeOffer(cmd.userId, cmd.coin, cmd.amount, cmd.dailyRatePpm, cmd.days, cmd.loop),
        );
      case 'CancelLoanOffer':
        return this.#margin(this.margin.cancelOffer(cmd.userId, cmd.offerId));
      case 'ChangeLoanLoop':
        return this.#margin(this.margin.changeLoop(cmd.userId, cmd.offerId, cmd.loop));
      case 'ChangeInvestMark':
        return this.#margin(this.margin.changeInvestMark(cmd.userId, cmd.loanId, cmd.investMark));
      case 'Borrow':
        return this.#margin(
          this.margin.borrow(
            cmd.userId,
            cmd.acctType,
            cmd.market,
            cmd.coin,
            cmd.amount,
            cmd.maxDailyRatePpm,
            cmd.days,
            cmd.rollOver,
          ),
        );
      case 'RepayLoan':
        return this.#margin(this.margin.repayLoan(cmd.userId, cmd.loanId, cmd.amount));
      case 'RepayAll':
        return this.#margin(this.margin.repayAll(cmd.userId, cmd.acctType, cmd.market, cmd.coin, cmd.amount));
      case 'SetMarginPreferences':
        return this.#margin(
          this.margin.setPreferences(cmd.userId, cmd.acctType, cmd.market, cmd.express, cmd.autoRepay),
        );
      case 'RegisterUser':
        return this.#register(cmd);
      case 'AddSubUser':
        return this.#addSubUser(cmd);
      case 'TransferFunds':
        return this.#transferFunds(cmd);
      case 'SetFeePreference':
        return this.#feePreference(cmd);
      case 'CreditDeposit':
        return this.#deposit(cmd);
      case 'AssignDepositAddress':
        return this.#assign(cmd);
      case 'ReportDeposit':
        return this.#report(cmd);
      case 'AddWithdrawAddress':
        return this.#addToBook(cmd);
      case 'VerifyWithdrawAddress':
        return this.#verify(cmd);
      case 'SetFundPassword':
        return this.#setPassword(cmd);
      case 'RecordFundPasswordFailure':
        return this.#passwordFailure(cmd);
      case 'RequestWithdrawal':
        return this.#request(cmd);
      case 'ApproveWithdrawal':
        return this.#approve(cmd);
      case 'CancelWithdrawal':
        return this.#cancelWithdrawal(cmd);
      case 'SendWithdrawal':
        return this.#send(cmd);
      case 'MarkWithdrawalSent':
        return this.#sent(cmd);
      case 'ConfirmWithdrawal':
        return this.#confirm(cmd);
      case 'FailWithdrawal':
        return this.#fail(cmd);
      case 'PlaceOrder':
        return this.#place(cmd);
      case 'PlaceOrderBatch':
        return this.#placeBatch(cmd);
      case 'CancelOrder':
        return this.#cancel(cmd);
      case 'CancelAllOrdersAfter':
        return this.#arm(cmd);
      case 'FireTimers':
        return this.#fire();
      case 'SetMarketStatus':
        return this.#setStatus(cmd);
      case 'UpsertCoin':
      case 'UpsertMarket':
      case 'CreateApiKey':
      case 'DeleteApiKey':
        throw new Error(`the reference does not model ${cmd.type}`);
      default:
        return this.#refuse('INVALID_PARAMETER');
    }
  }

  #margin(
    r: ResultName | { ok: true; loanIds?: number[]; offerId?: number; duplicate?: true },
  ): NaiveOutcome {
    if (typeof r === 'string') return this.#refuse(r);
    const { ok: _ok, ...extra } = r;
    return this.#ok(extra);
  }

  /** The pocket of an account ('spot' or a margin account) of a user. */
  #pocket(userId: number, acct: string, coin: string): Funds | Pocket {
    return acct === 'spot'
      ? this.#funds(this.#users.get(userId) as User, coin)
      : this.margin.pocket(acct, coin);
  }

  /** What a margin order of `acctType` may borrow when short (its express, else the account's default). */
  #express(
    acct: string,
    userId: number,
    express: boolean | undefined,
    coin: string,
    short: bigint,
  ): bigint | ResultName {
    if (acct === 'spot' || !(express ?? this.margin.expressDefault(acct))) return 'INSUFFICIENT_BALANCE';
    return this.margin.expressAmount(acct, userId, coin, short);
  }

  #refuse(result: ResultName): NaiveOutcome {
    return { result, trades: [], cancels: [] };
  }

  #ok(extra: Omit<NaiveOutcome, 'result' | 'trades' | 'cancels'> = {}): NaiveOutcome {
    return { result: 'OK', trades: this.#trades, cancels: this.#cancels, ...extra };
  }

  #funds(user: User, coin: string): Funds {
    let f = user.funds.get(coin);
    if (f === undefined) {
      f = { available: 0n, frozen: 0n };
      user.funds.set(coin, f);
    }
    return f;
  }

  #market(name: string): Market | undefined {
    return this.#markets.find((m) => m.spec.name === name);
  }

  // ───────────── users and funds ─────────────

  #register(cmd: RegisterUser): NaiveOutcome {
    const name = cmd.name;
    if (typeof name !== 'string' || name.length < 1 || name.length > 64 || !USER_NAME.test(name))
      return this.#refuse('INVALID_PARAMETER');
    for (const u of this.#users.values()) if (u.name === name) return this.#refuse('INVALID_PARAMETER');
    const id = this.#nextUserId++;
    this.#users.set(id, { id, name, usePlatformCoin: false, funds: new Map() });
    return this.#ok({ userId: id });
  }

  /** A main user: known and not a sub-account (the reference does not model freezing). */
  #mainUser(userId: number): User | ResultName {
    const main = this.#users.get(userId);
    if (main === undefined) return 'USER_NOT_FOUND';
    return main.main === undefined ? main : 'INVALID_STATE';
  }

  /** Issue 33: a new user owned by a main user, with its fund password; at most 100 per main user. */
  #addSubUser(cmd: AddSubUser): NaiveOutcome {
    const main = this.#mainUser(cmd.mainUserId);
    if (typeof main === 'string') return this.#refuse(main);
    const control = (c: string): boolean => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;
    if (typeof cmd.memo !== 'string' || [...cmd.memo].length > 64 || [...cmd.memo].some(control))
      return this.#refuse('INVALID_PARAMETER');
    if (typeof cmd.passwordHash !== 'string' || cmd.passwordHash.length < 1 || cmd.passwordHash.length > 512)
      return this.#refuse('INVALID_PARAMETER');
    const subs = [...this.#users.values()].filter((u) => u.main === main.id).length;
    if (subs >= 100) return this.#refuse('INVALID_STATE');
    const folded = typeof cmd.name === 'string' ? cmd.name.toLowerCase() : '';
    for (const u of this.#users.values())
      if (u.name.toLowerCase() === folded) return this.#refuse('INVALID_PARAMETER');
    const registered = this.#register({ type: 'RegisterUser', name: cmd.name });
    if (registered.result !== 'OK') return registered;
    const sub = this.#users.get(registered.userId as number) as User;
    sub.main = main.id;
    this.#passwords.set(sub.id, { failures: [], lockedUntil: 0 });
    return registered;
  }

  /** Issue 33: spot available from one user of a family to another, asked by the main user. */
  #transferFunds(cmd: TransferFunds): NaiveOutcome {
    const main = this.#mainUser(cmd.mainUserId);
    if (typeof main === 'string') return this.#refuse(main);
    const member = (id: number): User | undefined => {
      const u = this.#users.get(id);
      return u !== undefined && (u === main || u.main === main.id) ? u : undefined;
    };
    const from = member(cmd.fromUserId);
    const to = member(cmd.toUserId);
    if (from === undefined || to === undefined) return this.#refuse('USER_NOT_FOUND');
    if (from === to) return this.#refuse('INVALID_PARAMETER');
    if (!this.#decimals.has(cmd.coin)) return this.#refuse('UNKNOWN_COIN');
    if (!Number.isSafeInteger(cmd.amount) || cmd.amount <= 0) return this.#refuse('INVALID_AMOUNT');
    const source = this.#funds(from, cmd.coin);
    const amount = BigInt(cmd.amount);
    if (source.available < amount) return this.#refuse('INSUFFICIENT_BALANCE');
    source.available -= amount;
    this.#funds(to, cmd.coin).available += amount;
    return this.#ok();
  }

  #feePreference(cmd: SetFeePreference): NaiveOutcome {
    const user = this.#users.get(cmd.userId);
    if (user === undefined) return this.#refuse('USER_NOT_FOUND');
    user.usePlatformCoin = cmd.usePlatformCoin === true;
    return this.#ok();
  }

  /** User, then coin: the first checks of most funds commands. */
  #userCoin(userId: number, coin: string): ResultName | User {
    const user = this.#users.get(userId);
    if (user === undefined) return 'USER_NOT_FOUND';
    if (!this.#decimals.has(coin)) return RETIRED.has(coin) ? 'RETIRED_COIN_NAME' : 'UNKNOWN_COIN';
    return user;
  }

  #chain(coin: string, chain: string): ChainSpec | undefined {
    return this.#fundsConfig.find((f) => f.coin === coin)?.chains.find((c) => c.name === chain);
  }

  /** Whether the wire-form `text` is an address of a chain (`<account>_<memo>` on memo chains). */
  #addressForm(text: unknown, chain: ChainSpec): boolean {
    if (typeof text !== 'string') return false;
    if (!chain.memo) return ADDRESS.test(text);
    const i = text.indexOf('_');
    return i > 0 && ADDRESS.test(text.slice(0, i)) && MEMO.test(text.slice(i + 1));
  }

  /** Deposits credited less settled withdrawals. */
  #fundsHeld(coin: string): bigint {
    return (this.#credited.get(coin) as bigint) - (this.#withdrawn.get(coin) as bigint);
  }

  /** The venue's holdings from outside: deposits less withdrawals, and the lending pool's funding. */
  #outsideHoldings(coin: string): bigint {
    return this.#fundsHeld(coin) + this.margin.funded(coin);
  }

  #deposit(cmd: CreditDeposit): NaiveOutcome {
    const id = cmd.depositId;
    if (typeof id !== 'string' || id.length < 1 || id.length > 128 || /^(chain|internal):/.test(id))
      return this.#refuse('INVALID_PARAMETER');
    const user = this.#userCoin(cmd.userId, cmd.coin);
    if (typeof user === 'string') return this.#refuse(user);
    if (!isPositiveSafe(cmd.amount)) return this.#refuse('INVALID_AMOUNT');
    const amount = BigInt(cmd.amount);
    const seen = this.#deposits.get(id);
    if (seen !== undefined) {
      const same = seen.userId === cmd.userId && seen.coin === cmd.coin && seen.amount === amount;
      return same ? this.#ok({ duplicate: true }) : this.#refuse('DUPLICATE_REFERENCE');
    }
    if (this.#outsideHoldings(cmd.coin) + amount > MAX_SAFE) return this.#refuse('VALUE_OUT_OF_RANGE');
    this.#deposits.set(id, {
      userId: cmd.userId,
      coin: cmd.coin,
      address: '',
      amount,
      confirmations: 0,
      state: 'credited',
      internal: false,
    });
    this.#credited.set(cmd.coin, (this.#credited.get(cmd.coin) as bigint) + amount);
    this.#funds(user, cmd.coin).available += amount;
    return this.#ok();
  }

  #assign(cmd: AssignDepositAddress): NaiveOutcome {
    const user = this.#userCoin(cmd.userId, cmd.coin);
    if (typeof user === 'string') return this.#refuse(user);
    const chain = this.#chain(cmd.coin, cmd.chain);
    if (chain === undefined) return this.#refuse('INVALID_PARAMETER');
    const shape =
      typeof cmd.address === 'string' &&
      typeof cmd.memo === 'string' &&
      ADDRESS.test(cmd.address) &&
      (chain.memo ? MEMO.test(cmd.memo) : cmd.memo === '');
    if (!shape) return this.#refuse('INVALID_PARAMETER');
    if (!this.#canDeposit.get(cmd.coin) || !chain.canDeposit) return this.#refuse('DEPOSIT_DISABLED');
    const mine = this.#depositAddresses.find(
      (a) => a.userId === cmd.userId && a.coin === cmd.coin && a.chain === chain.name,
    );
    if (mine !== undefined) {
      const same = mine.address === cmd.address && mine.memo === cmd.memo;
      return same ? this.#ok({ duplicate: true }) : this.#refuse('INVALID_STATE');
    }
    if (this.#ownerOf(cmd.coin, chain.name, cmd.address, cmd.memo) !== undefined)
      return this.#refuse('DUPLICATE_REFERENCE');
    this.#depositAddresses.push({
      userId: cmd.userId,
      coin: cmd.coin,
      chain: chain.name,
      address: cmd.address,
      memo: cmd.memo,
      verified: true,
    });
    return this.#ok();
  }

  #ownerOf(coin: string, chain: string, address: string, memo: string): number | undefined {
    return this.#depositAddresses.find(
      (a) => a.coin === coin && a.chain === chain && a.address === address && a.memo === memo,
    )?.userId;
  }

  #report(cmd: ReportDeposit): NaiveOutcome {
    if (!this.#decimals.has(cmd.coin)) return this.#refuse('UNKNOWN_COIN');
    const chain = this.#chain(cmd.coin, cmd.chain);
    if (chain === undefined) return this.#refuse('INVALID_PARAMETER');
    if (typeof cmd.txHash !== 'string' || !HASH.test(cmd.txHash)) return this.#refuse('INVALID_PARAMETER');
    if (!Number.isSafeInteger(cmd.output) || cmd.output < 0) return this.#refuse('INVALID_PARAMETER');
    if (!Number.isSafeInteger(cmd.confirmations) || cmd.confirmations < 0)
      return this.#refuse('INVALID_PARAMETER');
    if (typeof cmd.failed !== 'boolean') return this.#refuse('INVALID_PARAMETER');
    if (!isPositiveSafe(cmd.amount)) return this.#refuse('INVALID_AMOUNT');
    const owner = this.#ownerOf(cmd.coin, chain.name, cmd.address, cmd.memo);
    if (owner === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    const key = `chain:${cmd.coin}/${chain.name}/${cmd.txHash}/${cmd.output}`;
    const address = cmd.memo === '' ? cmd.address : `${cmd.address}_${cmd.memo}`;
    const amount = BigInt(cmd.amount);
    const seen = this.#deposits.get(key);
    if (seen !== undefined) {
      if (seen.address !== address || seen.amount !== amount) return this.#refuse('DUPLICATE_REFERENCE');
      if (seen.state !== 'confirming') return this.#ok({ duplicate: true });
      if (!cmd.failed && seen.confirmations === cmd.confirmations) return this.#ok({ duplicate: true });
    }
    let state: DepositState = 'confirming';
    if (cmd.failed) state = 'failed';
    else if (cmd.confirmations >= chain.confirmations) {
      if (this.#outsideHoldings(cmd.coin) + amount > MAX_SAFE) return this.#refuse('VALUE_OUT_OF_RANGE');
      state = 'credited';
      this.#credited.set(cmd.coin, (this.#credited.get(cmd.coin) as bigint) + amount);
      this.#funds(this.#users.get(owner) as User, cmd.coin).available += amount;
    }
    this.#deposits.set(key, {
      userId: owner,
      coin: cmd.coin,
      address,
      amount,
      confirmations: cmd.confirmations,
      state,
      internal: false,
    });
    return this.#ok();
  }

  #addToBook(cmd: AddWithdrawAddress): NaiveOutcome {
    const user = this.#userCoin(cmd.userId, cmd.coin);
    if (typeof user === 'string') return this.#refuse(user);
    const chain = this.#chain(cmd.coin, cmd.chain);
    if (chain === undefined || !this.#addressForm(cmd.address, chain))
      return this.#refuse('INVALID_PARAMETER');
    const book = this.#books.filter((e) => e.userId === cmd.userId && e.coin === cmd.coin);
    const seen = book.find((e) => e.address === cmd.address);
    if (seen !== undefined)
      return seen.chain === chain.name ? this.#ok({ duplicate: true }) : this.#refuse('DUPLICATE_REFERENCE');
    if (book.length >= 20) return this.#refuse('INVALID_STATE');
    this.#books.push({
      userId: cmd.userId,
      coin: cmd.coin,
      chain: chain.name,
      address: cmd.address,
      memo: '',
      verified: false,
    });
    return this.#ok();
  }

  #bookEntry(userId: number, coin: string, address: string): Owned | undefined {
    return this.#books.find((e) => e.userId === userId && e.coin === coin && e.address === address);
  }

  #verify(cmd: VerifyWithdrawAddress): NaiveOutcome {
    const user = this.#userCoin(cmd.userId, cmd.coin);
    if (typeof user === 'string') return this.#refuse(user);
    const entry = this.#bookEntry(cmd.userId, cmd.coin, cmd.address);
    if (entry === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (entry.verified) return this.#ok({ duplicate: true });
    entry.verified = true;
    return this.#ok();
  }

  #setPassword(cmd: SetFundPassword): NaiveOutcome {
    if (!this.#users.has(cmd.userId)) return this.#refuse('USER_NOT_FOUND');
    if (typeof cmd.hash !== 'string' || cmd.hash.length < 1 || cmd.hash.length > 512)
      return this.#refuse('INVALID_PARAMETER');
    this.#passwords.set(cmd.userId, { failures: [], lockedUntil: 0 });
    return this.#ok();
  }

  #passwordFailure(cmd: RecordFundPasswordFailure): NaiveOutcome {
    if (!this.#users.has(cmd.userId)) return this.#refuse('USER_NOT_FOUND');
    const p = this.#passwords.get(cmd.userId);
    if (p === undefined || p.lockedUntil > this.#time) return this.#refuse('INVALID_STATE');
    p.failures = [...p.failures.filter((t) => this.#time - t < PASSWORD_WINDOW), this.#time];
    if (p.failures.length >= 5) {
      p.lockedUntil = this.#time + PASSWORD_LOCK;
      p.failures = [];
    }
    return this.#ok();
  }

  /** What the user withdrew of the coin on `day`: requests of that day not failed or cancelled. */
  #usedOn(userId: number, coin: string, day: number): bigint {
    let used = 0n;
    for (const w of this.#withdrawals) {
      if (
        w.userId === userId &&
        w.coin === coin &&
        w.day === day &&
        w.state !== 'failed' &&
        w.state !== 'cancelled'
      )
        used += w.amount;
    }
    return used;
  }

  #request(cmd: RequestWithdrawal): NaiveOutcome {
    const user = this.#userCoin(cmd.userId, cmd.coin);
    if (typeof user === 'string') return this.#refuse(user);
    if (!isPositiveSafe(cmd.amount)) return this.#refuse('INVALID_AMOUNT');
    if (!Number.isSafeInteger(cmd.fee) || cmd.fee < 0) return this.#refuse('INVALID_PARAMETER');
    if (typeof cmd.itransfer !== 'boolean') return this.#refuse('INVALID_PARAMETER');
    const entry = this.#bookEntry(cmd.userId, cmd.coin, cmd.address);
    if (entry === undefined || !entry.verified) return this.#refuse('WITHDRAW_ADDRESS_UNVERIFIED');
    const chain = this.#chain(cmd.coin, entry.chain) as ChainSpec;
    if (!this.#canWithdraw.get(cmd.coin) || !chain.canWithdraw) return this.#refuse('WITHDRAW_DISABLED');
    const password = this.#passwords.get(cmd.userId);
    if (password === undefined) return this.#refuse('FUND_PASSWORD_WRONG');
    if (password.lockedUntil > this.#time) return this.#refuse('FUND_PASSWORD_LOCKED');
    const i = cmd.address.indexOf('_');
    const [to, memo] = chain.memo ? [cmd.address.slice(0, i), cmd.address.slice(i + 1)] : [cmd.address, ''];
    const receiver = this.#ownerOf(cmd.coin, chain.name, to, memo);
    if (receiver === cmd.userId) return this.#refuse('INVALID_PARAMETER');
    const internal = cmd.itransfer && receiver !== undefined;
    if (cmd.fee !== chain.withdrawFee && !(internal && cmd.fee === 0))
      return this.#refuse('WRONG_WITHDRAW_FEE');
    if (cmd.amount < chain.minWithdraw) return this.#refuse('BELOW_MIN_WITHDRAW');
    const funds = this.#fundsConfig.find((f) => f.coin === cmd.coin) as CoinFunds;
    const day = Math.floor(this.#time / DAY);
    const amount = BigInt(cmd.amount);
    if (this.#usedOn(cmd.userId, cmd.coin, day) + amount > BigInt(funds.dailyWithdrawLimit))
      return this.#refuse('DAILY_WITHDRAW_LIMIT');
    const fee = internal ? 0n : BigInt(chain.withdrawFee);
    const f = this.#funds(user, cmd.coin);
    if (amount + fee > MAX_SAFE || f.available < amount + fee) return this.#refuse('INSUFFICIENT_BALANCE');
    const id = String(this.#withdrawals.length + 1);
    const w: Withdrawal = {
      id,
      userId: cmd.userId,
      coin: cmd.coin,
      chain,
      amount,
      fee,
      state: 'submitted',
      txHash: '',
      confirmations: 0,
      internal,
      day,
    };
    this.#withdrawals.push(w);
    if (internal) {
      f.available -= amount;
      this.#funds(this.#users.get(receiver as number) as User, cmd.coin).available += amount;
      w.state = 'succeeded';
      this.#deposits.set(`internal:${id}`, {
        userId: receiver as number,
        coin: cmd.coin,
        address: cmd.address,
        amount,
        confirmations: 0,
        state: 'credited',
        internal: true,
      });
    } else {
      f.available -= amount + fee;
      f.frozen += amount + fee;
      if (amount <= BigInt(funds.autoApproveLimit)) w.state = 'approved';
    }
    return this.#ok({ withdrawalId: id });
  }

  #withdrawal(id: string): Withdrawal | undefined {
    return this.#withdrawals.find((w) => w.id === id);
  }

  #releaseWithdrawal(w: Withdrawal, state: 'failed' | 'cancelled'): void {
    const f = this.#funds(this.#users.get(w.userId) as User, w.coin);
    f.frozen -= w.amount + w.fee;
    f.available += w.amount + w.fee;
    w.state = state;
  }

  #approve(cmd: ApproveWithdrawal): NaiveOutcome {
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (w.state === 'approved') return this.#ok({ duplicate: true });
    if (w.state !== 'submitted') return this.#refuse('INVALID_STATE');
    w.state = 'approved';
    return this.#ok();
  }

  #cancelWithdrawal(cmd: CancelWithdrawal): NaiveOutcome {
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined || (cmd.userId !== undefined && cmd.userId !== w.userId))
      return this.#refuse('UNKNOWN_REFERENCE');
    if (w.state === 'cancelled') return this.#ok({ duplicate: true });
    if (w.state !== 'submitted' && w.state !== 'approved') return this.#refuse('INVALID_STATE');
    this.#releaseWithdrawal(w, 'cancelled');
    return this.#ok();
  }

  #send(cmd: SendWithdrawal): NaiveOutcome {
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (w.state === 'sending') return this.#ok({ duplicate: true });
    if (w.state !== 'approved') return this.#refuse('INVALID_STATE');
    w.state = 'sending';
    return this.#ok();
  }

  #sent(cmd: MarkWithdrawalSent): NaiveOutcome {
    if (typeof cmd.txHash !== 'string' || !HASH.test(cmd.txHash)) return this.#refuse('INVALID_PARAMETER');
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (w.txHash === cmd.txHash) return this.#ok({ duplicate: true });
    if (w.state !== 'sending') return this.#refuse('INVALID_STATE');
    w.state = 'sent';
    w.txHash = cmd.txHash;
    return this.#ok();
  }

  #confirm(cmd: ConfirmWithdrawal): NaiveOutcome {
    if (!Number.isSafeInteger(cmd.confirmations) || cmd.confirmations < 0)
      return this.#refuse('INVALID_PARAMETER');
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (w.state === 'succeeded') return this.#ok({ duplicate: true });
    if (w.state !== 'sent' && w.state !== 'confirmed') return this.#refuse('INVALID_STATE');
    if (w.confirmations === cmd.confirmations) return this.#ok({ duplicate: true });
    w.confirmations = cmd.confirmations;
    if (cmd.confirmations < w.chain.confirmations) {
      w.state = cmd.confirmations === 0 ? 'sent' : 'confirmed';
      return this.#ok();
    }
    w.state = 'succeeded';
    this.#funds(this.#users.get(w.userId) as User, w.coin).frozen -= w.amount + w.fee;
    this.#feeIncome.set(w.coin, (this.#feeIncome.get(w.coin) as bigint) + w.fee);
    this.#withdrawn.set(w.coin, (this.#withdrawn.get(w.coin) as bigint) + w.amount);
    return this.#ok();
  }

  #fail(cmd: FailWithdrawal): NaiveOutcome {
    if (typeof cmd.reason !== 'string' || cmd.reason.length < 1 || cmd.reason.length > 200)
      return this.#refuse('INVALID_PARAMETER');
    const w = this.#withdrawal(cmd.withdrawalId);
    if (w === undefined) return this.#refuse('UNKNOWN_REFERENCE');
    if (w.state === 'failed') return this.#ok({ duplicate: true });
    if (w.state === 'succeeded' || w.state === 'cancelled') return this.#refuse('INVALID_STATE');
    this.#releaseWithdrawal(w, 'failed');
    return this.#ok();
  }

  // ───────────── orders ─────────────

  /** User, market, account type, then trading status: the checks single and batch orders share. */
  #orderContext(userId: number, marketName: string, acctType: number): ResultName | [User, Market] {
    const user = this.#users.get(userId);
    if (user === undefined) return 'USER_NOT_FOUND';
    const market = this.#market(marketName);
    if (market === undefined) return 'UNKNOWN_MARKET';
    if (acctType !== 0 && acctType !== 1 && acctType !== 2) return 'INVALID_PARAMETER';
    if (market.spec.status !== 'trading') return 'MARKET_HALTED';
    return [user, market];
  }

  /** What the order must freeze (quote for a buy, base for a sell), or why it is refused. */
  #orderCost(market: Market, side: Side, price: number, amount: number): ResultName | bigint {
    if (!isPositiveSafe(price)) return 'INVALID_PRICE';
    if (!isPositiveSafe(amount)) return 'INVALID_AMOUNT';
    if (amount < market.spec.minAmount) return 'BELOW_MIN_AMOUNT';
    const value = BigInt(price) * BigInt(amount) * market.tickLotQuote;
    if (value > MAX_SAFE) return 'VALUE_OUT_OF_RANGE';
    if (value < BigInt(market.spec.minSize)) return 'BELOW_MIN_SIZE';
    if (side === BUY) return value;
    const base = BigInt(amount) * market.lotBase;
    return base > MAX_SAFE ? 'VALUE_OUT_OF_RANGE' : base;
  }

  #payCoin(market: Market, side: Side): string {
    return side === BUY ? market.spec.quote : market.spec.base;
  }

  #place(cmd: PlaceOrder): NaiveOutcome {
    const ctx = this.#orderContext(cmd.userId, cmd.market, cmd.acctType);
    if (typeof ctx === 'string') return this.#refuse(ctx);
    if (cmd.side !== BUY && cmd.side !== SELL) return this.#refuse('INVALID_PARAMETER');
    if (cmd.kind !== 'limit' && cmd.kind !== 'postOnly' && cmd.kind !== 'ioc')
      return this.#refuse('INVALID_PARAMETER');
    if (cmd.clientOrderId !== '' && !CLIENT_ID.test(cmd.clientOrderId))
      return this.#refuse('INVALID_PARAMETER');
    const [user, market] = ctx;
    const cost = this.#orderCost(market, cmd.side, cmd.price, cmd.amount);
    if (typeof cost === 'string') return this.#refuse(cost);
    const acct = this.#acct(user.id, cmd.acctType, market);
    const pay = this.#payCoin(market, cmd.side);
    const available =
      acct === 'spot' ? this.#funds(user, pay).available : this.margin.pocketOf(acct, pay).available;
    let borrow = 0n;
    if (available < cost) {
      const x = this.#express(acct, user.id, cmd.express, pay, cost - available);
      if (typeof x === 'string') return this.#refuse(x);
      borrow = x;
    }
    if (
      acct !== 'spot' &&
      !this.#lossOk(acct, market, cmd.side, [{ price: cmd.price, amount: cmd.amount }], pay, borrow)
    )
      return this.#refuse('OVER_ORDER_LIMIT');
    if (cmd.kind === 'postOnly') {
      const best = this.#bestOpposite(market, cmd.side);
      if (best !== undefined && this.#crosses(cmd.side, BigInt(cmd.price), best.price))
        return this.#refuse('POST_ONLY_WOULD_TAKE');
    }
    if (borrow > 0n) this.margin.expressBorrow(acct, user.id, pay, borrow);
    const id = this.#submit(
      user,
      market,
      cmd.side,
      cmd.kind,
      cmd.price,
      cmd.amount,
      cost,
      cmd.clientOrderId,
      acct,
    );
    this.margin.autoRepay();
    return this.#ok({ orderId: id });
  }

  #placeBatch(cmd: PlaceOrderBatch): NaiveOutcome {
    const ctx = this.#orderContext(cmd.userId, cmd.market, cmd.acctType);
    if (typeof ctx === 'string') return this.#refuse(ctx);
    if (cmd.side !== BUY && cmd.side !== SELL) return this.#refuse('INVALID_PARAMETER');
    if (!Array.isArray(cmd.orders) || cmd.orders.length < 1 || cmd.orders.length > MAX_BATCH)
      return this.#refuse('INVALID_PARAMETER');
    const [user, market] = ctx;
    const costs: bigint[] = [];
    for (const o of cmd.orders) {
      const cost = this.#orderCost(market, cmd.side, o.price, o.amount);
      if (typeof cost === 'string') return this.#refuse(cost);
      costs.push(cost);
    }
    const total = costs.reduce((a, b) => a + b, 0n);
    const acct = this.#acct(user.id, cmd.acctType, market);
    const payCoin = this.#payCoin(market, cmd.side);
    const available =
      acct === 'spot' ? this.#funds(user, payCoin).available : this.margin.pocketOf(acct, payCoin).available;
    if (total > MAX_SAFE) return this.#refuse('INSUFFICIENT_BALANCE');
    let borrow = 0n;
    if (available < total) {
      const x = this.#express(acct, user.id, cmd.express, payCoin, total - available);
      if (typeof x === 'string') return this.#refuse(x);
      borrow = x;
    }
    if (acct !== 'spot' && !this.#lossOk(acct, market, cmd.side, cmd.orders, payCoin, borrow))
      return this.#refuse('OVER_ORDER_LIMIT');
    if (borrow > 0n) this.margin.expressBorrow(acct, user.id, payCoin, borrow);
    // The whole batch is frozen before any order matches (see the engine's PlaceOrderBatch).
    const pay = this.#pocket(user.id, acct, payCoin);
    pay.available -= total;
    pay.frozen += total;
    const orderIds = cmd.orders.map((o, i) =>
      this.#submit(user, market, cmd.side, 'limit', o.price, o.amount, costs[i] as bigint, '', acct, true),
    );
    this.margin.autoRepay();
    return this.#ok({ orderIds });
  }

  /** Issue 29's limit on margin orders far from the mark (naive-margin.ts `orderLossOk`). */
  #lossOk(
    acct: string,
    market: Market,
    side: Side,
    orders: readonly { price: number; amount: number }[],
    payCoin: string,
    borrow: bigint,
  ): boolean {
    return this.margin.orderLossOk(
      acct,
      orders.map((o) => lossOrder(market, side, BigInt(o.price), BigInt(o.amount))),
      this.#restingOf(acct),
      payCoin,
      borrow,
    );
  }

  /** The orders resting in a margin account, every market's books scanned. */
  #restingOf(acct: string): NaiveLossOrder[] {
    return this.#markets
      .flatMap((m) => [...m.bids, ...m.asks])
      .filter((o) => o.acct === acct)
      .map((o) => lossOrder(o.market, o.side, o.price, o.remaining));
  }

  /** The account an order of `acctType` uses: spot, the market's isolated account, or cross. */
  #acct(userId: number, acctType: number, market: Market): string {
    return acctType === 1 ? `i:${userId}:${market.spec.name}` : acctType === 2 ? `c:${userId}` : 'spot';
  }

  #crosses(takerSide: Side, takerPrice: bigint, restingPrice: bigint): boolean {
    return takerSide === BUY ? restingPrice <= takerPrice : restingPrice >= takerPrice;
  }

  /** The opposite side's first order in priority: best price, then lowest id. */
  #bestOpposite(market: Market, side: Side): Order | undefined {
    const orders = side === BUY ? market.asks : market.bids;
    let best: Order | undefined;
    for (const o of orders) {
      if (best === undefined) best = o;
      else if (side === BUY ? o.price < best.price : o.price > best.price) best = o;
      else if (o.price === best.price && o.id < best.id) best = o;
    }
    return best;
  }

  #submit(
    user: User,
    market: Market,
    side: Side,
    kind: OrderKind,
    price: number,
    amount: number,
    cost: bigint,
    clientOrderId: string,
    acct: string,
    prefrozen = false,
    liquidation = false,
  ): number {
    const order: Order = {
      id: this.#nextOrderId++,
      userId: user.id,
      market,
      side,
      kind,
      price: BigInt(price),
      amount: BigInt(amount),
      remaining: BigInt(amount),
      filled: 0n,
      filledValue: 0n,
      fees: 0n,
      platformFees: 0n,
      frozen: cost,
      usePlatformCoin: user.usePlatformCoin,
      acct,
      liquidation,
    };
    this.#lastSubmitted = order;
    if (!prefrozen) {
      const pay = this.#pocket(user.id, acct, this.#payCoin(market, side));
      pay.available -= cost;
      pay.frozen += cost;
    }
    if (clientOrderId !== '')
      this.#clientIds.set(`${user.id}|${market.spec.name}|${clientOrderId}`, order.id);

    let selfTrade = false;
    while (order.remaining > 0n) {
      const maker = this.#bestOpposite(market, side);
      if (maker === undefined || !this.#crosses(side, order.price, maker.price)) break;
      if (maker.userId === order.userId) {
        selfTrade = true;
        break;
      }
      this.#trade(market, order, maker);
    }

    if (order.remaining === 0n) return order.id;
    if (selfTrade || kind === 'ioc') {
      this.#release(order);
      this.#cancels.push([order.id, selfTrade ? 'selfTrade' : 'ioc']);
    } else {
      (side === BUY ? market.bids : market.asks).push(order);
    }
    return order.id;
  }

  /** One fill between the taker and the maker at the maker's price. */
  #trade(market: Market, taker: Order, maker: Order): void {
    const lots = taker.remaining < maker.remaining ? taker.remaining : maker.remaining;
    const price = maker.price;
    const value = price * lots * market.tickLotQuote;
    const baseUnits = lots * market.lotBase;
    const { base, quote, makerFee: makerRate } = market.spec;
    const takerRate = taker.liquidation ? 0 : market.spec.takerFee;
    const buyer = taker.side === BUY ? taker : maker;
    const seller = taker.side === BUY ? maker : taker;
    // The buyer froze its own limit price; any improvement over the fill price goes back now.
    const buyerHeld = buyer.price * lots * market.tickLotQuote;
    const buyerQuote = this.#pocket(buyer.userId, buyer.acct, quote);
    buyerQuote.frozen -= buyerHeld;
    buyerQuote.available += buyerHeld - value;
    buyer.frozen -= buyerHeld;
    this.#pocket(buyer.userId, buyer.acct, base).available += baseUnits;
    const buyerFee = this.#fee(buyer, base, baseUnits, buyer === taker ? takerRate : makerRate);

    this.#pocket(seller.userId, seller.acct, base).frozen -= baseUnits;
    seller.frozen -= baseUnits;
    this.#pocket(seller.userId, seller.acct, quote).available += value;
    const sellerFee = this.#fee(seller, quote, value, seller === taker ? takerRate : makerRate);
    // What the fill brought into margin accounts, gross of fees, in taker then maker order.
    for (const o of [taker, maker])
      if (o.acct !== 'spot')
        this.margin.noteReceived(o.acct, o === buyer ? base : quote, o === buyer ? baseUnits : value);

    for (const o of [taker, maker]) {
      o.remaining -= lots;
      o.filled += lots;
      o.filledValue += value;
    }
    if (maker.remaining === 0n) {
      const side = maker.side === BUY ? market.bids : market.asks;
      side.splice(side.indexOf(maker), 1);
    }
    const takerFee = taker === buyer ? buyerFee : sellerFee;
    const makerFee = maker === buyer ? buyerFee : sellerFee;
    this.#trades.push({
      tradeId: this.#nextTradeId++,
      market: market.spec.name,
      price: toNumber(price),
      amount: toNumber(lots),
      value: toNumber(value),
      takerSide: taker.side,
      takerOrderId: taker.id,
      makerOrderId: maker.id,
      takerUserId: taker.userId,
      makerUserId: maker.userId,
      takerFee: toNumber(takerFee[0]),
      takerFeeCoin: takerFee[1],
      makerFee: toNumber(makerFee[0]),
      makerFeeCoin: makerFee[1],
      time: this.#time,
    });
    // Set only now: both fees of this fill were converted at the price before it.
    market.lastPrice = price;
  }

  /** Charges the fee on `received` units of `coin` just credited; returns [amount, coin charged]. */
  #fee(order: Order, coin: string, received: bigint, ratePpm: number): [bigint, string] {
    const fee = (received * BigInt(ratePpm)) / MILLION;
    if (fee === 0n) return [0n, coin];
    if (order.usePlatformCoin && this.#decimals.has(this.#platformCoin)) {
      const inPlatform = this.#feeInPlatformCoin(fee, coin);
      const zb = this.#pocket(order.userId, order.acct, this.#platformCoin);
      if (inPlatform !== undefined && zb.available >= inPlatform) {
        zb.available -= inPlatform;
        this.#feeIncome.set(
          this.#platformCoin,
          (this.#feeIncome.get(this.#platformCoin) as bigint) + inPlatform,
        );
        order.platformFees += inPlatform;
        return [inPlatform, this.#platformCoin];
      }
    }
    this.#pocket(order.userId, order.acct, coin).available -= fee;
    this.#feeIncome.set(coin, (this.#feeIncome.get(coin) as bigint) + fee);
    order.fees += fee;
    return [fee, coin];
  }

  /** Price of one `from` coin in `to` coins from a market between them with a last price, as a fraction. */
  #leg(from: string, to: string): Leg | undefined {
    for (const m of this.#markets) {
      if (m.spec.base === from && m.spec.quote === to && m.lastPrice > 0n)
        return { from, to, num: m.lastPrice, den: pow10(m.spec.priceScale) };
    }
    for (const m of this.#markets) {
      if (m.spec.base === to && m.spec.quote === from && m.lastPrice > 0n)
        return { from, to, num: pow10(m.spec.priceScale), den: m.lastPrice };
    }
    return undefined;
  }

  /** The fee in platform-coin units at last prices, discounted, floored once; undefined without a path. */
  #feeInPlatformCoin(fee: bigint, coin: string): bigint | undefined {
    const target = this.#platformCoin;
    let legs: Leg[] | undefined;
    if (coin === target) legs = [];
    else {
      const direct = this.#leg(coin, target);
      if (direct !== undefined) legs = [direct];
      else {
        for (const m of this.#markets) {
          const via = m.spec.base === coin ? m.spec.quote : m.spec.quote === coin ? m.spec.base : undefined;
          if (via === undefined || via === target) continue;
          const a = this.#leg(coin, via);
          const b = this.#leg(via, target);
          if (a !== undefined && b !== undefined) {
            legs = [a, b];
            break;
          }
        }
      }
    }
    if (legs === undefined) return undefined;
    // units(from) / 10^dec(from) coins × price → coins(to) × 10^dec(to) units, all as one fraction.
    let num = fee * (MILLION - this.#discount);
    let den = MILLION;
    for (const leg of legs) {
      num *= leg.num * pow10(this.#decimals.get(leg.to) as number);
      den *= leg.den * pow10(this.#decimals.get(leg.from) as number);
    }
    const result = num / den;
    return result > MAX_SAFE ? undefined : result;
  }

  /** Returns what the order still holds to available and zeroes its hold. */
  #release(order: Order): void {
    const f = this.#pocket(order.userId, order.acct, this.#payCoin(order.market, order.side));
    f.frozen -= order.frozen;
    f.available += order.frozen;
    order.frozen = 0n;
  }

  #cancelResting(order: Order, reason: CancelReason): void {
    const side = order.side === BUY ? order.market.bids : order.market.asks;
    side.splice(side.indexOf(order), 1);
    this.#release(order);
    this.#cancels.push([order.id, reason]);
  }

  #findResting(id: number): Order | undefined {
    for (const m of this.#markets) {
      for (const o of m.bids) if (o.id === id) return o;
      for (const o of m.asks) if (o.id === id) return o;
    }
    return undefined;
  }

  #cancel(cmd: CancelOrder): NaiveOutcome {
    if (!this.#users.has(cmd.userId)) return this.#refuse('USER_NOT_FOUND');
    if (this.#market(cmd.market) === undefined) return this.#refuse('UNKNOWN_MARKET');
    const byId = cmd.orderId > 0;
    const byClientId = cmd.clientOrderId !== '';
    if (byId === byClientId) return this.#refuse('INVALID_PARAMETER');
    const id = byId ? cmd.orderId : this.#clientIds.get(`${cmd.userId}|${cmd.market}|${cmd.clientOrderId}`);
    const order = id === undefined ? undefined : this.#findResting(id);
    if (order === undefined || order.userId !== cmd.userId || order.market.spec.name !== cmd.market)
      return this.#refuse('ORDER_NOT_FOUND');
    this.#cancelResting(order, 'user');
    return this.#ok();
  }

  #arm(cmd: CancelAllOrdersAfter): NaiveOutcome {
    if (!this.#users.has(cmd.userId)) return this.#refuse('USER_NOT_FOUND');
    if (this.#market(cmd.market) === undefined) return this.#refuse('UNKNOWN_MARKET');
    const deadline = this.#time + this.#cancelAllAfterMs;
    const existing = this.#deadlines.find((d) => d.userId === cmd.userId && d.market === cmd.market);
    if (existing !== undefined) existing.deadline = deadline;
    else this.#deadlines.push({ userId: cmd.userId, market: cmd.market, deadline });
    return this.#ok({ deadline });
  }

  #fire(): NaiveOutcome {
    for (;;) {
      // Earliest due deadline, then lowest user id, then market name.
      let next: Deadline | undefined;
      for (const d of this.#deadlines) {
        if (d.deadline > this.#time) continue;
        if (
          next === undefined ||
          d.deadline < next.deadline ||
          (d.deadline === next.deadline &&
            (d.userId < next.userId || (d.userId === next.userId && d.market < next.market)))
        )
          next = d;
      }
      if (next === undefined) break;
      this.#deadlines.splice(this.#deadlines.indexOf(next), 1);
      const market = this.#market(next.market) as Market;
      const victims = [...market.bids, ...market.asks]
        .filter((o) => o.userId === (next as Deadline).userId)
        .sort((a, b) => a.id - b.id);
      for (const o of victims) this.#cancelResting(o, 'deadman');
    }
    // Then the loans' hours, term ends and auto-repayments (naive-margin.ts).
    this.margin.fire();
    return this.#ok();
  }

  #setStatus(cmd: SetMarketStatus): NaiveOutcome {
    const market = this.#market(cmd.market);
    if (market === undefined) return this.#refuse('UNKNOWN_MARKET');
    if (cmd.status !== 'trading' && cmd.status !== 'halted') return this.#refuse('INVALID_PARAMETER');
    market.spec = { ...market.spec, status: cmd.status };
    return this.#ok();
  }

  // ───────────── reads ─────────────

  /** Registered user ids, ascending. */
  userIds(): number[] {
    return [...this.#users.keys()].sort((a, b) => a - b);
  }

  /** Coin names in configuration order. */
  coinNames(): string[] {
    return [...this.#coins];
  }

  /** Market names in configuration order. */
  marketNames(): string[] {
    return this.#markets.map((m) => m.spec.name);
  }

  balance(userId: number, coin: string): { available: number; frozen: number } | undefined {
    const user = this.#users.get(userId);
    if (user === undefined || !this.#decimals.has(coin)) return undefined;
    const f = user.funds.get(coin);
    return { available: toNumber(f?.available ?? 0n), frozen: toNumber(f?.frozen ?? 0n) };
  }

  /** Fee income, credits and settled withdrawals of a coin, exact (cumulative counters may pass 2^53). */
  feeIncome(coin: string): bigint {
    return this.#feeIncome.get(coin) ?? 0n;
  }

  credited(coin: string): bigint {
    return this.#credited.get(coin) ?? 0n;
  }

  /** Σ available + frozen of a coin over every account: spot, margin, the pool, insurance and fee income. */
  held(coin: string): bigint {
    let held = this.feeIncome(coin) + this.margin.holdings(coin);
    for (const user of this.#users.values()) {
      const f = user.funds.get(coin);
      held += (f?.available ?? 0n) + (f?.frozen ?? 0n);
    }
    return held;
  }

  withdrawn(coin: string): bigint {
    return this.#withdrawn.get(coin) ?? 0n;
  }

  /** Withdrawal ids in creation order, and each one's state. */
  withdrawalIds(): string[] {
    return this.#withdrawals.map((w) => w.id);
  }

  withdrawalState(id: string): WithdrawalState | undefined {
    return this.#withdrawal(id)?.state;
  }

  /** The state of a deposit record by its id (`chain:…`, `internal:…` or the operator's). */
  depositState(id: string): DepositState | undefined {
    return this.#deposits.get(id)?.state;
  }

  /** Every deposit record id, in creation order. */
  depositIds(): string[] {
    return [...this.#deposits.keys()];
  }

  lastPrice(market: string): number {
    return toNumber(this.#market(market)?.lastPrice ?? 0n);
  }

  /** Number of resting orders over all markets. */
  restingCount(): number {
    let n = 0;
    for (const m of this.#markets) n += m.bids.length + m.asks.length;
    return n;
  }

  /** The `index`-th resting order over all markets (bids then asks, arrival order), for generators. */
  restingAt(index: number): NaiveOrderView | undefined {
    let i = index;
    for (const m of this.#markets) {
      for (const side of [m.bids, m.asks]) {
        const o = side[i];
        if (o !== undefined) return this.#view(o);
        i -= side.length;
      }
    }
    return undefined;
  }

  /** One side of a market's book in priority order: best price first, then lowest id. */
  book(market: string, side: Side): NaiveOrderView[] {
    const m = this.#market(market);
    if (m === undefined) return [];
    const orders = [...(side === BUY ? m.bids : m.asks)];
    orders.sort((a, b) => {
      if (a.price !== b.price) return (side === BUY ? a.price > b.price : a.price < b.price) ? -1 : 1;
      return a.id - b.id;
    });
    return orders.map((o) => this.#view(o));
  }

  #view(o: Order): NaiveOrderView {
    return {
      id: o.id,
      userId: o.userId,
      market: o.market.spec.name,
      side: o.side,
      price: toNumber(o.price),
      amount: toNumber(o.amount),
      remaining: toNumber(o.remaining),
      filled: toNumber(o.filled),
      filledValue: toNumber(o.filledValue),
      fees: toNumber(o.fees),
      platformFees: toNumber(o.platformFees),
    };
  }

  /**
   * Checks the reference's own books: no negative balance; every user's frozen balance equals what
   * their orders (price × remaining × tick-lot for buys, remaining × lot for sells) and pending
   * withdrawals hold; no book crossed; and per coin Σ (available + frozen) + fee income =
   * credits − settled withdrawals, never beyond the safe range. Throws on the first fault.
   */
  checkConservation(): void {
    const holds = new Map<string, bigint>();
    const hold = (userId: number, coin: string, x: bigint): void => {
      const k = `${userId}|${coin}`;
      holds.set(k, (holds.get(k) ?? 0n) + x);
    };
    const marginHolds = new Map<string, bigint>();
    const marginHold = (acct: string, coin: string, x: bigint): void => {
      const k = `${acct}|${coin}`;
      marginHolds.set(k, (marginHolds.get(k) ?? 0n) + x);
    };
    for (const m of this.#markets) {
      let bestBid = 0n;
      let bestAsk = -1n;
      for (const o of [...m.bids, ...m.asks]) {
        const expected = o.side === BUY ? o.price * o.remaining * m.tickLotQuote : o.remaining * m.lotBase;
        if (o.frozen !== expected)
          throw new Error(`reference order ${o.id} holds ${o.frozen}, expected ${expected}`);
        if (o.remaining <= 0n || o.filled + o.remaining !== o.amount)
          throw new Error(
            `reference order ${o.id}: filled ${o.filled} + remaining ${o.remaining} ≠ ${o.amount}`,
          );
        if (o.acct === 'spot') hold(o.userId, this.#payCoin(m, o.side), o.frozen);
        else marginHold(o.acct, this.#payCoin(m, o.side), o.frozen);
        if (o.side === BUY && o.price > bestBid) bestBid = o.price;
        if (o.side === SELL && (bestAsk < 0n || o.price < bestAsk)) bestAsk = o.price;
      }
      if (bestAsk >= 0n && bestBid >= bestAsk)
        throw new Error(`reference book ${m.spec.name} crossed: ${bestBid} ≥ ${bestAsk}`);
    }
    for (const w of this.#withdrawals) {
      const ended = w.state === 'succeeded' || w.state === 'failed' || w.state === 'cancelled';
      if (!ended) hold(w.userId, w.coin, w.amount + w.fee);
    }
    for (const user of this.#users.values())
      for (const coin of this.#coins) hold(user.id, coin, this.margin.offerHolds(user.id, coin));
    for (const acct of this.margin.accounts())
      for (const coin of this.#coins) {
        const frozen = this.margin.pocketOf(acct, coin).frozen;
        const expected = marginHolds.get(`${acct}|${coin}`) ?? 0n;
        if (frozen !== expected)
          throw new Error(`reference ${acct} ${coin} frozen ${frozen}, holds ${expected}`);
      }
    for (const coin of this.#coins) {
      let held = (this.#feeIncome.get(coin) as bigint) + this.margin.holdings(coin);
      for (const user of this.#users.values()) {
        const f = user.funds.get(coin) ?? { available: 0n, frozen: 0n };
        if (f.available < 0n || f.frozen < 0n)
          throw new Error(`reference user ${user.id} ${coin} negative: ${f.available}/${f.frozen}`);
        const expected = holds.get(`${user.id}|${coin}`) ?? 0n;
        if (f.frozen !== expected)
          throw new Error(`reference user ${user.id} ${coin} frozen ${f.frozen}, holds ${expected}`);
        held += f.available + f.frozen;
      }
      const net =
        (this.#credited.get(coin) as bigint) -
        (this.#withdrawn.get(coin) as bigint) +
        this.margin.funded(coin);
      if (held !== net)
        throw new Error(`reference conservation broken for ${coin}: held ${held}, net ${net}`);
      if (held > MAX_SAFE) throw new Error(`reference ${coin} holdings ${held} beyond the safe range`);
    }
  }
}
