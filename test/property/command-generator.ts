/** @module command-generator — seeded random engine command streams for differential tests. */
import type {
  AcctType,
  Command,
  OrderKind,
  PlaceOrder,
  PlaceOrderBatch,
  ReportDeposit,
  SequencedCommand,
  Side,
} from '../../src/domain/commands.ts';
import type { ChainSpec, DepositState, WithdrawalState } from '../../src/domain/chains.ts';
import type { VenueConfig } from '../../src/domain/specs.ts';
import { seededUint32 } from '../../src/store/trading-stream.ts';
import { isAttackView, restingAttack, spikeAttack, type AttackStep } from './limit-attacks.ts';
import { bandWalk, fastWalk } from './fast-walks.ts';
import { leverUsers, leveragedPosition, priceShock, type Scheduled } from './price-shocks.ts';

/** Seeded choices over `seededUint32`: the same seed gives the same stream on every machine. */
export class Rng {
  /** The next 32-bit unsigned integer. */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = seededUint32(seed);
  }

  /** An integer in [lo, hi], both inclusive; the span must stay below 2^32. */
  int(lo: number, hi: number): number {
    return lo + (this.next() % (hi - lo + 1));
  }

  /** true with probability `percent` / 100 (in steps of 0.01%). */
  chance(percent: number): boolean {
    return this.next() % 10_000 < percent * 100;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[this.next() % xs.length] as T;
  }

  /** Picks a key with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let total = 0;
    for (const [, w] of entries) total += w;
    let r = this.next() % total;
    for (const [k, w] of entries) {
      if (r < w) return k;
      r -= w;
    }
    return (entries[entries.length - 1] as [K, number])[0];
  }
}

/** What the generator may look at to aim its commands: the reference engine's state. */
export interface GeneratorView {
  restingCount(): number;
  restingAt(index: number):
    | {
        readonly id: number;
        readonly userId: number;
        readonly market: string;
        readonly side: Side;
        readonly price: number;
      }
    | undefined;
  balance(userId: number, coin: string): { readonly available: number; readonly frozen: number } | undefined;
  withdrawalIds(): string[];
  withdrawalState(id: string): WithdrawalState | undefined;
  depositState(id: string): DepositState | undefined;
  /** The reference's margin (test/reference/naive-margin.ts): open loans and offers to aim at. */
  readonly margin?: {
    loanIds(): number[];
    /** [offer id, lender user id (0: the pool)] of open offers. */
    offers(): [number, number][];
  };
}

export interface GeneratorOptions {
  /** Users registered at the start (more may follow). Default 6. */
  readonly users?: number;
  /** Above this many resting orders the generator leans on cancels. Default 250. */
  readonly restingCap?: number;
  /**
   * Scales how often orders are cancelled (by id, client id or dead-man switch), in percent.
   * Default 100; lower keeps deeper books.
   */
  readonly cancelPercent?: number;
  /** Markets to trade (each needs a plan in PLANS). Default: btc_usdt, eth_btc, zb_usdt; eth_usdt rarely. */
  readonly markets?: readonly string[];
  /** The first command's time (ms). */
  readonly startTime?: number;
  /**
   * Mix margin commands in (issue 14): transfers, pool funding, offers, borrowing, repayment,
   * preferences, margin orders with express, and jumps of days for interest and term ends.
   * Default false, which keeps every stream without margin exactly as it was (golden hashes).
   */
  readonly margin?: boolean;
  /**
   * With `margin`: leveraged isolated positions and price shocks (issue 15, price-shocks.ts), so
   * that accounts cross their notice and liquidation lines. Cross accounts' debts are kept small
   * (borrows of a 2,000th of the usual, margin orders without express, no transfers out) so that
   * they never reach their liquidation line: the reference does not liquidate cross accounts (the
   * differential test checks the lowest cross risk rate it saw). Default false.
   */
  readonly shocks?: boolean;
  /**
   * With `shocks`: attacks on the margin limits (issue 29, limit-attacks.ts) — single small prints
   * far from the market, an accomplice's wash trades, and a large order resting on the losing side
   * of the mark, then borrowing and moving out what the limits show. Default false, which keeps the streams of the other options as they were.
   */
  readonly attacks?: boolean;
  /** With `shocks`: issue 29's fast walks too (fast-walks.ts). */
  readonly walks?: boolean;
  /**
   * With `shocks`: band walks (fast-walks.ts `bandWalk`) as the only leveraged positions and price
   * moves — no other leveraged positions, shocks or walks dilute the band walks' accounts — so that
   * their liquidations close in one command and band-check.ts applies. Default false.
   */
  readonly bandWalks?: boolean;
  /**
   * Sub-accounts (issue 33): main users open sub-accounts, which then trade and are funded like any
   * user, and transfers within a family (and refused ones across). Default false, which keeps the
   * streams of the other options as they were.
   */
  readonly subAccounts?: boolean;
}

interface MarketPlan {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  /** Relative frequency of orders on this market. */
  readonly weight: number;
  readonly startMid: number;
  mid: number;
  /** Smallest lot count that meets both minAmount and minSize at the starting mid. */
  readonly minLots: number;
  readonly minAmount: number;
  /** Base coin units in one lot, and quote coin units in one tick × lot. */
  readonly lotUnits: number;
  readonly tickLotUnits: number;
}

/** A deposit output the generator has reported, with the confirmations reported last. */
interface ChainDepositPlan {
  readonly coin: string;
  readonly chain: ChainSpec;
  readonly txHash: string;
  readonly address: string;
  readonly memo: string;
  readonly amount: number;
  confirmations: number;
}

/** A coin's chain the generator moves funds on. */
interface ChainPlan {
  readonly coin: string;
  readonly chain: ChainSpec;
}

interface DepositPlan {
  readonly id: string;
  readonly userId: number;
  readonly coin: string;
  readonly amount: number;
}

/** Starting mids (ticks) and relative order frequencies of the markets the generator can trade. */
const PLANS: Readonly<Record<string, { mid: number; weight: number }>> = {
  btc_usdt: { mid: 3_000_000, weight: 10 },
  eth_btc: { mid: 50_000, weight: 6 },
  zb_usdt: { mid: 2_500, weight: 6 },
  eth_usdt: { mid: 200_000, weight: 1 },
  btc_qc: { mid: 2_100_000, weight: 5 },
  zb_qc: { mid: 1_800, weight: 5 },
};
const DEFAULT_MARKETS = ['btc_usdt', 'eth_btc', 'zb_usdt', 'eth_usdt'];

/** Coin units credited to a funded user at the start: plenty of each traded coin. */
const RICH: Readonly<Record<string, number>> = {
  btc: 50 * 1e8,
  eth: 1_000 * 1e8,
  usdt: 2_000_000 * 1e6,
  qc: 14_000_000 * 1e6,
  zb: 5_000_000 * 1e8,
};
const CLIENT_IDS = ['cid1', 'cid2', 'cid3', 'order0042', 'Zz99'];
const INVALID_CLIENT_IDS = ['ab', 'bad-id!', 'x'.repeat(37)];
const WEIGHTS = {
  limit: 380,
  postOnly: 70,
  ioc: 70,
  selfCross: 30,
  batch: 35,
  cancelId: 120,
  cancelForeign: 10,
  cancelClientId: 40,
  cancelMalformed: 8,
  deposit: 25,
  chainDeposit: 30,
  withdrawal: 30,
  withdrawalStep: 45,
  fundPassword: 4,
  withdrawBook: 5,
  feePreference: 12,
  deadman: 20,
  fireTimers: 25,
  marketStatus: 6,
  invalidOrder: 40,
  register: 2,
};
/** Margin commands' weights, added only with `margin: true` (zero otherwise: streams unchanged). */
const MARGIN_WEIGHTS = {
  marginIn: 40,
  marginOut: 20,
  fundPool: 3,
  loanOffer: 12,
  loanOfferChange: 8,
  borrow: 30,
  repay: 25,
  marginPreferences: 6,
  marginOrder: 150,
  marginBatch: 8,
  invalidMargin: 10,
};
/** Leveraged positions and price shocks, added only with `shocks: true`. */
const SHOCK_WEIGHTS = { leverage: 40, shock: 14 };
/** Attacks on the margin limits (limit-attacks.ts), added only with `attacks: true`. */
const ATTACK_WEIGHTS = { spike: 12, resting: 6 };
/** Issue 29's fast walks (fast-walks.ts), added only with `walks: true`. */
const WALK_WEIGHTS = { walk: 8 };
/** Band walks (fast-walks.ts `bandWalk`), added only with `bandWalks: true`, instead of the other moves. */
const BAND_WEIGHTS = { leverage: 0, shock: 0, walk: 0, bandWalk: 12 };
/** Sub-accounts and transfers in a family (issue 33), added only with `subAccounts: true`. */
const SUB_ACCOUNT_WEIGHTS = { subAccount: 4, subTransfer: 20 };
type Kind =
  | keyof typeof WEIGHTS
  | keyof typeof MARGIN_WEIGHTS
  | keyof typeof SHOCK_WEIGHTS
  | keyof typeof ATTACK_WEIGHTS
  | keyof typeof WALK_WEIGHTS
  | keyof typeof BAND_WEIGHTS
  | keyof typeof SUB_ACCOUNT_WEIGHTS;
const NO_MARGIN = Object.fromEntries(Object.keys(MARGIN_WEIGHTS).map((k) => [k, 0])) as Record<
  keyof typeof MARGIN_WEIGHTS,
  number
>;
const RATES = [500, 500, 600, 800, 1_000, 2_000];

/**
 * Produces a reproducible stream of engine commands for one seed: registrations and deposits
 * first, then a mix of orders (limit, PostOnly, IOC, batches, self-crossing), cancels by id and
 * by client order id, deposits and withdrawals (with repeats and conflicts), fee preferences,
 * dead-man switches with timers, halts, and a share of invalid commands. `next(view)` aims
 * cancels and self-crossing orders at the resting orders `view` shows, and keeps the number of
 * resting orders near `restingCap` by cancelling when above it.
 */
export class CommandGenerator {
  readonly #rng: Rng;
  readonly #markets: MarketPlan[];
  readonly #restingCap: number;
  readonly #weights: Record<Kind, number>;
  readonly #halted = new Set<string>();
  readonly #deposits: DepositPlan[] = [];
  readonly #chains: ChainPlan[];
  readonly #chainDeposits: ChainDepositPlan[] = [];
  readonly #setup: Command[] = [];
  /** Commands to send next at the same time as the one before (to make deadlines tie). */
  readonly #sameTime: Command[] = [];
  readonly #coins: string[];
  #users = 0;
  #seq = 0;
  #time: number;
  #depositSerial = 0;
  #txSerial = 0;
  readonly #margin: boolean;
  readonly #shocks: boolean;
  /** A leveraged position's or a shock's commands still to send. */
  readonly #burst: Scheduled[] = [];
  /** An attack's steps still to send (limit-attacks.ts); each made when it is sent. */
  readonly #attack: AttackStep[] = [];
  #fundingSerial = 0;
  /** The users registered at the start: main users, never sub-accounts. */
  #mainUsers = 0;
  /** Sub-accounts opened (issue 33): sub-account's id → its main user's. */
  readonly #subs = new Map<number, number>();

  constructor(seed: number, venue: VenueConfig, options: GeneratorOptions = {}) {
    this.#rng = new Rng(seed);
    this.#restingCap = options.restingCap ?? 250;
    const scale = (w: number): number => Math.max(1, Math.round((w * (options.cancelPercent ?? 100)) / 100));
    this.#margin = options.margin === true;
    this.#shocks = this.#margin && options.shocks === true;
    this.#weights = {
      ...WEIGHTS,
      ...(this.#margin ? MARGIN_WEIGHTS : NO_MARGIN),
      ...(this.#shocks ? SHOCK_WEIGHTS : { leverage: 0, shock: 0 }),
      ...(this.#shocks && options.attacks === true ? ATTACK_WEIGHTS : { spike: 0, resting: 0 }),
      ...(this.#shocks && options.walks === true ? WALK_WEIGHTS : { walk: 0 }),
      ...(this.#shocks && options.bandWalks === true ? BAND_WEIGHTS : { bandWalk: 0 }),
      ...(options.subAccounts === true ? SUB_ACCOUNT_WEIGHTS : { subAccount: 0, subTransfer: 0 }),
      cancelId: scale(WEIGHTS.cancelId),
      cancelClientId: scale(WEIGHTS.cancelClientId),
      deadman: scale(WEIGHTS.deadman),
    };
    this.#time = options.startTime ?? 1_700_000_000_000;
    const decimals = new Map(venue.coins.map((c) => [c.name, c.unitDecimal]));
    const traded = options.markets ?? DEFAULT_MARKETS;
    this.#markets = venue.markets
      .filter((m) => traded.includes(m.name) && PLANS[m.name] !== undefined)
      .map((m) => {
        const plan = PLANS[m.name] as { mid: number; weight: number };
        const tickLot = 10 ** ((decimals.get(m.quote) as number) - m.priceScale - m.amountScale);
        const forSize = Math.ceil(m.minSize / (plan.mid * tickLot));
        return {
          name: m.name,
          base: m.base,
          quote: m.quote,
          weight: plan.weight,
          startMid: plan.mid,
          mid: plan.mid,
          minLots: Math.max(m.minAmount, forSize),
          lotUnits: 10 ** ((decimals.get(m.base) as number) - m.amountScale),
          tickLotUnits: tickLot,
          minAmount: m.minAmount,
        };
      });
    this.#coins = [...new Set(this.#markets.flatMap((m) => [m.base, m.quote]))];
    this.#chains = (venue.funds ?? [])
      .filter((f) => this.#coins.includes(f.coin))
      .flatMap((f) => f.chains.map((chain) => ({ coin: f.coin, chain })));
    const users = options.users ?? 6;
    this.#mainUsers = users;
    for (let u = 1; u <= users; u++) {
      this.#setup.push({ type: 'RegisterUser', name: `user${u}` });
      // The last user stays poor, so that balance checks and platform-fee fallbacks are exercised.
      const poor = u === users;
      for (const coin of this.#coins) {
        const amount = poor ? Math.floor((RICH[coin] as number) / 5_000) : (RICH[coin] as number);
        this.#setup.push(this.#newDeposit(u, coin, amount));
      }
      // Every user but the poor one has a fund password; each has a deposit address on every
      // chain, an external address of each chain in the book, and the next user's deposit address.
      if (!poor) this.#setup.push({ type: 'SetFundPassword', userId: u, hash: `hash-${u}` });
      for (const { coin, chain } of this.#chains) {
        this.#setup.push({
          type: 'AssignDepositAddress',
          userId: u,
          coin,
          chain: chain.name,
          ...depositAddress(coin, chain, u),
        });
      }
    }
    for (let u = 1; u <= users; u++) {
      for (const { coin, chain } of this.#chains) {
        for (const address of [
          externalAddress(coin, chain, u),
          bookForm(depositAddress(coin, chain, (u % users) + 1)),
        ]) {
          this.#setup.push({ type: 'AddWithdrawAddress', userId: u, coin, chain: chain.name, address });
          this.#setup.push({ type: 'VerifyWithdrawAddress', userId: u, coin, address });
        }
      }
    }
    this.#users = users;
  }

  /** The next command, stamped with a rising sequence number and a non-decreasing time. */
  next(view: GeneratorView): SequencedCommand {
    const tied = this.#sameTime.shift();
    const burst =
      tied === undefined && this.#setup.length === 0
        ? (this.#attackStep(view) ?? this.#burst.shift())
        : undefined;
    const cmd = tied ?? this.#setup.shift() ?? burst?.cmd ?? this.#random(view);
    this.#seq++;
    if (burst?.dtMs !== undefined) {
      this.#time += burst.dtMs;
      return { ...cmd, seq: this.#seq, time: this.#time } as SequencedCommand;
    }
    // Mostly small steps, a quarter of them none; now and then a jump past dead-man deadlines,
    // and rarely one of hours (past midnight for daily limits, past fund-password windows).
    if (tied === undefined) {
      const r = this.#rng.next() % 10_000;
      this.#time +=
        r < 2_500
          ? 0
          : r < 2_600
            ? this.#rng.int(20_000, 70_000)
            : r < 2_603
              ? this.#rng.int(2, 30) * 3_600_000
              : r < 2_606 && this.#margin
                ? this.#rng.int(1, 11) * 86_400_000 // past loan terms (10 days)
                : this.#rng.int(1, 150);
    }
    return { ...cmd, seq: this.#seq, time: this.#time } as SequencedCommand;
  }

  #random(view: GeneratorView): Command {
    const rng = this.#rng;
    for (const m of this.#markets) this.#walk(m);
    if (view.restingCount() > this.#restingCap && rng.chance(60)) {
      return this.#cancelResting(view) ?? this.#order(view, 'ioc');
    }
    const kind: Kind = rng.weighted(this.#weights);
    switch (kind) {
      case 'limit':
        return this.#order(view, 'limit');
      case 'postOnly':
        return this.#order(view, 'postOnly');
      case 'ioc':
        return this.#order(view, 'ioc');
      case 'selfCross':
        return this.#selfCross(view) ?? this.#order(view, 'limit');
      case 'batch':
        return this.#batch(view);
      case 'cancelId':
        return this.#cancelResting(view) ?? this.#cancelClientId();
      case 'cancelForeign':
        return this.#cancelForeign(view);
      case 'cancelClientId':
        return this.#cancelClientId();
      case 'cancelMalformed':
        return this.#cancelMalformed();
      case 'deposit':
        return this.#deposit();
      case 'chainDeposit':
        return this.#chainDeposit();
      case 'withdrawal':
        return this.#withdrawal(view);
      case 'withdrawalStep':
        return this.#withdrawalStep(view);
      case 'fundPassword':
        return this.#fundPassword();
      case 'withdrawBook':
        return this.#withdrawBook();
      case 'feePreference':
        return {
          type: 'SetFeePreference',
          userId: rng.chance(5) ? 999 : this.#user(),
          usePlatformCoin: rng.chance(55),
        };
      case 'deadman':
        // Sometimes a second switch armed at the same instant, so that deadlines tie when they fire.
        if (rng.chance(30))
          this.#sameTime.push({
            type: 'CancelAllOrdersAfter',
            userId: this.#user(),
            market: this.#market().name,
          });
        return {
          type: 'CancelAllOrdersAfter',
          userId: rng.chance(5) ? 999 : this.#user(),
          market: rng.chance(5) ? 'foo_bar' : this.#market().name,
        };
      case 'fireTimers':
        return { type: 'FireTimers' };
      case 'marketStatus':
        return this.#marketStatus();
      case 'invalidOrder':
        return this.#invalidOrder(view);
      case 'register':
        return this.#register();
      case 'subAccount':
        return this.#subAccount();
      case 'subTransfer':
        return this.#subTransfer();
      case 'walk':
        this.#burst.push(...fastWalk(rng, this.#market(), this.#users));
        return (this.#burst.shift() as Scheduled).cmd;
      case 'bandWalk': {
        // Smaller positions than the other leveraged ones: each step's resting order holds twice one.
        const share = rng.int(2_000, 8_000);
        const equity = (coin: string): number => Math.floor((RICH[coin] as number) / share);
        const m = this.#market();
        const best = (side: Side): number | undefined => {
          const o = isAttackView(view) ? view.book(m.name, side)[0] : undefined;
          return o === undefined ? undefined : Number(o.price);
        };
        this.#burst.push(
          ...bandWalk(rng, m, this.#users, equity, `band${++this.#fundingSerial}`, {
            bid: best(1),
            ask: best(0),
          }),
        );
        return (this.#burst.shift() as Scheduled).cmd;
      }
      case 'leverage':
      case 'shock': {
        const m = this.#market();
        const share = rng.int(400, 4_000);
        const equity = (coin: string): number => Math.floor((RICH[coin] as number) / share);
        this.#burst.push(
          ...(kind === 'shock'
            ? priceShock(rng, m, this.#users)
            : leveragedPosition(rng, m, this.#users, equity, `lever${++this.#fundingSerial}`)),
        );
        return (this.#burst.shift() as Scheduled).cmd;
      }
      case 'spike':
      case 'resting':
        return this.#spike(view, kind);
      case 'marginIn':
      case 'marginOut':
      case 'fundPool':
      case 'loanOffer':
      case 'loanOfferChange':
      case 'borrow':
      case 'repay':
      case 'marginPreferences':
      case 'marginOrder':
      case 'marginBatch':
      case 'invalidMargin':
        return this.#marginCommand(view, kind);
    }
  }

  // ───────────── attacks on the margin limits (issue 29, limit-attacks.ts) ─────────────

  /** The next attack step as a scheduled command (a made step that gives none is skipped). */
  #attackStep(view: GeneratorView): Scheduled | undefined {
    for (let step = this.#attack.shift(); step !== undefined; step = this.#attack.shift()) {
      if (!('make' in step)) return step;
      const cmd = isAttackView(view) ? step.make(view) : undefined;
      if (cmd !== undefined) return { cmd };
    }
    return undefined;
  }

  /** A spike, wash-trade or resting-order attack by the first rich user no leveraged position uses. */
  #spike(view: GeneratorView, kind: 'spike' | 'resting'): Command {
    const attacker = leverUsers(this.#users).length + 1;
    if (attacker > this.#users - 1) return this.#order(view, 'limit');
    const accomplice = this.#rng.int(1, attacker - 1);
    const m = this.#market();
    const share = this.#rng.int(400, 4_000);
    const equity = (coin: string): number => Math.floor((RICH[coin] as number) / share);
    const fundingId = `attack${++this.#fundingSerial}`;
    this.#attack.push(
      ...(kind === 'spike'
        ? spikeAttack(this.#rng, m, attacker, accomplice, equity, fundingId)
        : restingAttack(this.#rng, m, attacker, equity, fundingId)),
    );
    return this.#attackStep(view)?.cmd ?? this.#order(view, 'limit');
  }

  // ───────────── margin (issue 14) ─────────────

  /** A margin account of a random user: isolated on a traded market, or cross. */
  #marginAccount(): { userId: number; acctType: 1 | 2; market: string; m: MarketPlan } {
    const m = this.#market();
    const cross = this.#rng.chance(35);
    let userId = this.#user();
    // With shocks, the leveraged positions' isolated accounts are the price shocks' alone.
    const lever = leverUsers(this.#users).length;
    if (this.#shocks && !cross && userId <= lever)
      userId = this.#rng.int(lever + 1, Math.max(lever + 1, this.#users));
    return { userId, acctType: cross ? 2 : 1, market: cross ? '' : m.name, m };
  }

  /** An amount of `coin`: mostly a slice of a rich user's holding, sometimes tiny or huge. */
  #coinAmount(coin: string): number {
    const rich = RICH[coin] as number;
    const r = this.#rng.next() % 100;
    if (r < 3) return this.#rng.int(0, 2);
    if (r < 6) return rich * 10;
    return this.#rng.int(1, Math.floor(rich / (r < 50 ? 2_000 : 200)));
  }

  #marginCommand(view: GeneratorView, kind: Kind): Command {
    const rng = this.#rng;
    const a = this.#marginAccount();
    const coin = rng.pick([a.m.base, a.m.quote]);
    switch (kind) {
      case 'marginIn':
      case 'marginOut': {
        const inFull = rng.chance(10);
        const amount = inFull ? (view.balance(a.userId, coin)?.available ?? 1) : this.#coinAmount(coin);
        return {
          type: 'MarginTransfer',
          userId: a.userId,
          // With shocks, nothing leaves a cross account: its risk rate falls only by price and interest.
          direction: kind === 'marginIn' || this.#crossCapped(a.acctType) ? 'in' : 'out',
          acctType: a.acctType,
          market: a.market,
          coin,
          amount,
        };
      }
      case 'fundPool': {
        const repeat = this.#fundingSerial > 0 && rng.chance(10);
        return {
          type: 'FundLendingPool',
          fundingId: `fund${repeat ? this.#fundingSerial : ++this.#fundingSerial}`,
          coin,
          amount: rng.chance(90)
            ? (RICH[coin] as number) / 100
            : Math.min(this.#coinAmount(coin), RICH[coin] as number),
          dailyRatePpm: rng.chance(95) ? rng.pick(RATES) : rng.pick([1, 499, 2_001]),
          days: rng.chance(95) ? rng.pick([10, 20, 30]) : rng.pick([0, 15, 31]),
        };
      }
      case 'loanOffer':
        return {
          type: 'PlaceLoanOffer',
          userId: a.userId,
          coin,
          amount: this.#coinAmount(coin),
          dailyRatePpm: rng.chance(95) ? rng.pick(RATES) : rng.pick([0, 499, 2_001]),
          days: rng.chance(95) ? rng.pick([10, 20, 30]) : 15,
          loop: rng.chance(50),
        };
      case 'loanOfferChange': {
        const offers = view.margin?.offers() ?? [];
        const [offerId, lender] =
          offers.length > 0 && rng.chance(85) ? rng.pick(offers) : [rng.int(1, 50), this.#user()];
        const userId = rng.chance(90) ? lender : this.#user();
        const loanIds = view.margin?.loanIds() ?? [];
        if (rng.chance(20))
          return {
            type: 'ChangeInvestMark',
            userId,
            loanId: loanIds.length > 0 ? rng.pick(loanIds) : 1,
            investMark: rng.chance(50),
          };
        return rng.chance(60)
          ? { type: 'CancelLoanOffer', userId, offerId }
          : { type: 'ChangeLoanLoop', userId, offerId, loop: rng.chance(50) };
      }
      case 'borrow': {
        const r = rng.next() % 100;
        return {
          type: 'Borrow',
          userId: a.userId,
          acctType: a.acctType,
          market: a.market,
          coin,
          // With shocks, cross accounts borrow little: they must never reach their liquidation line
          // (at a 2,000th, then a 20,000th, a cross account that sold borrowed btc reached it on the
          // long run's seed 1006; the reference does not liquidate cross accounts).
          amount: this.#crossCapped(a.acctType)
            ? Math.max(1, Math.floor(this.#coinAmount(coin) / 200_000))
            : r < 70
              ? Math.max(1, Math.floor(this.#coinAmount(coin) / 50))
              : this.#coinAmount(coin),
          ...(rng.chance(30) ? { maxDailyRatePpm: rng.chance(90) ? rng.pick(RATES) : 3_000 } : {}),
          ...(rng.chance(20) ? { days: rng.chance(90) ? rng.pick([10, 20, 30]) : 7 } : {}),
          rollOver: rng.chance(40),
        };
      }
      case 'repay': {
        const loans = view.margin?.loanIds() ?? [];
        const amount = rng.chance(40)
          ? ('all' as const)
          : rng.chance(5)
            ? 0
            : this.#coinAmount(coin) / 100 > 1
              ? Math.floor(this.#coinAmount(coin) / 100)
              : 1;
        if (loans.length > 0 && rng.chance(65)) {
          const loanId = rng.pick(loans);
          return { type: 'RepayLoan', userId: rng.chance(95) ? a.userId : 999, loanId, amount };
        }
        return { type: 'RepayAll', userId: a.userId, acctType: a.acctType, market: a.market, coin, amount };
      }
      case 'marginPreferences':
        return {
          type: 'SetMarginPreferences',
          userId: a.userId,
          acctType: a.acctType,
          market: a.market,
          ...(rng.chance(70) ? { express: rng.chance(60) } : {}),
          ...(rng.chance(70) ? { autoRepay: rng.chance(60) } : {}),
        };
      case 'marginOrder': {
        const o = this.#order(view, rng.pick(['limit', 'limit', 'limit', 'ioc', 'postOnly'] as const));
        const plan = this.#markets.find((p) => p.name === o.market) as MarketPlan;
        return {
          ...o,
          ...(this.#shocks ? { userId: a.userId } : {}),
          acctType: a.acctType,
          // Margin accounts hold less: orders near the minimum mostly.
          amount: rng.chance(80) ? rng.int(plan.minLots, plan.minLots * 8) : o.amount,
          ...(rng.chance(60) ? { express: rng.chance(75) } : {}),
          // (an account's default may be express: say no explicitly)
          ...(this.#crossCapped(a.acctType) ? { express: false } : {}),
        };
      }
      case 'marginBatch': {
        const b = this.#batch(view);
        return {
          ...b,
          ...(this.#shocks ? { userId: a.userId } : {}),
          acctType: a.acctType,
          ...(rng.chance(50) ? { express: true } : {}),
          ...(this.#crossCapped(a.acctType) ? { express: false } : {}),
        };
      }
      default: {
        // Unknown market and account forms.
        const r = rng.int(0, 3);
        if (r === 0)
          return {
            type: 'MarginTransfer',
            userId: a.userId,
            direction: 'in',
            acctType: 1,
            market: 'foo_bar',
            coin,
            amount: 1,
          };
        if (r === 1)
          return {
            type: 'Borrow',
            userId: a.userId,
            acctType: 2,
            market: a.m.name,
            coin,
            amount: 1,
            rollOver: false,
          };
        if (r === 2)
          return { type: 'RepayAll', userId: 999, acctType: 1, market: a.m.name, coin, amount: 'all' };
        return {
          type: 'MarginTransfer',
          userId: a.userId,
          direction: 'in',
          acctType: 1,
          market: a.m.name,
          coin: 'doge',
          amount: 1,
        };
      }
    }
  }

  /** With shocks, cross accounts' margin orders do not borrow (see `GeneratorOptions.shocks`). */
  #crossCapped(acctType: 1 | 2): boolean {
    return this.#shocks && acctType === 2;
  }

  #user(): number {
    return this.#rng.int(1, this.#users);
  }

  /** A market chosen by the plan's weights. */
  #market(): MarketPlan {
    let total = 0;
    for (const m of this.#markets) total += m.weight;
    let r = this.#rng.next() % total;
    for (const m of this.#markets) {
      if (r < m.weight) return m;
      r -= m.weight;
    }
    return this.#markets[0] as MarketPlan;
  }

  /** The mid drifts by up to ±0.1% a step and stays within [½, 2] of where it started. */
  #walk(m: MarketPlan): void {
    const step = Math.max(1, Math.floor(m.mid / 1_000));
    m.mid = Math.min(
      2 * m.startMid,
      Math.max(Math.floor(m.startMid / 2), m.mid + this.#rng.int(-step, step)),
    );
  }

  #price(m: MarketPlan): number {
    const spread = Math.max(2, Math.floor(m.mid / 200));
    return Math.max(1, m.mid + this.#rng.int(-spread, spread));
  }

  /** Mostly near the minimum, sometimes large; a few just below the minimum size. */
  #amount(m: MarketPlan): number {
    const rng = this.#rng;
    const r = rng.next() % 100;
    if (r < 3) return Math.max(m.minAmount, Math.floor((m.minLots * 2) / 3));
    if (r < 70) return rng.int(m.minLots, m.minLots * 10);
    if (r < 95) return rng.int(m.minLots, m.minLots * 100);
    return rng.int(m.minLots * 100, m.minLots * 2_000);
  }

  #clientOrderId(): string {
    return this.#rng.chance(30) ? this.#rng.pick(CLIENT_IDS) : '';
  }

  #order(view: GeneratorView, kind: OrderKind): PlaceOrder {
    const rng = this.#rng;
    const m = this.#market();
    const side: Side = rng.chance(50) ? 1 : 0;
    const userId = this.#user();
    const price = this.#price(m);
    // Mostly small orders; now and then exactly all the user can pay, or just beyond it.
    let amount = this.#amount(m);
    const r = rng.next() % 100;
    if (r < 4) {
      const lots = this.#affordableLots(view, userId, m, side, price);
      amount = Math.max(m.minAmount, r < 2 ? lots : lots + 1);
    }
    return {
      type: 'PlaceOrder',
      userId,
      market: m.name,
      side,
      kind,
      price,
      amount,
      acctType: 0,
      clientOrderId: this.#clientOrderId(),
    };
  }

  /** A user's order opposite one of their own resting orders, at or through its price. */
  #selfCross(view: GeneratorView): PlaceOrder | undefined {
    const rng = this.#rng;
    const n = view.restingCount();
    if (n === 0) return undefined;
    const target = view.restingAt(rng.int(0, n - 1));
    const m = this.#markets.find((p) => p.name === target?.market);
    if (target === undefined || m === undefined) return undefined;
    const through = rng.int(0, Math.max(1, Math.floor(target.price / 500)));
    return {
      type: 'PlaceOrder',
      userId: target.userId,
      market: target.market,
      side: target.side === 1 ? 0 : 1,
      kind: rng.pick(['limit', 'limit', 'ioc'] as const),
      price: Math.max(1, target.side === 1 ? target.price - through : target.price + through),
      amount: this.#amount(m),
      acctType: 0,
      clientOrderId: this.#clientOrderId(),
    };
  }

  /** The most lots `userId` can pay for at `price` from their available balance. */
  #affordableLots(view: GeneratorView, userId: number, m: MarketPlan, side: Side, price: number): number {
    const available = BigInt(view.balance(userId, side === 1 ? m.quote : m.base)?.available ?? 0);
    const unit = BigInt(side === 1 ? price * m.tickLotUnits : m.lotUnits);
    return Number(available / unit);
  }

  #batch(view: GeneratorView): PlaceOrderBatch {
    const rng = this.#rng;
    const m = this.#market();
    const side: Side = rng.chance(50) ? 1 : 0;
    const userId = this.#user();
    const r = rng.next() % 100;
    const count = r < 2 ? 0 : r < 4 ? 21 : rng.int(1, 20);
    const orders = Array.from({ length: count }, () => ({ price: this.#price(m), amount: this.#amount(m) }));
    if (count > 0 && rng.chance(5)) {
      const i = rng.int(0, count - 1);
      orders[i] = { price: rng.chance(50) ? 0 : (orders[i]?.price ?? 1), amount: rng.chance(50) ? 0 : 1 };
    }
    const spend = rng.next() % 100;
    if (count >= 2 && spend < 8) {
      // All the user can pay, split over the first orders; or half of it in each (too much together).
      const parts = Math.min(count, rng.int(2, 4));
      for (let i = 0; i < parts; i++) {
        const price = this.#price(m);
        const lots = this.#affordableLots(view, userId, m, side, price);
        orders[i] = { price, amount: Math.max(m.minAmount, Math.floor(lots / (spend < 5 ? parts : 2))) };
      }
      orders.length = parts;
    }
    return { type: 'PlaceOrderBatch', userId, market: m.name, side, acctType: 0, orders };
  }

  #cancelResting(view: GeneratorView): Command | undefined {
    const n = view.restingCount();
    if (n === 0) return undefined;
    const o = view.restingAt(this.#rng.int(0, n - 1));
    if (o === undefined) return undefined;
    return { type: 'CancelOrder', userId: o.userId, market: o.market, orderId: o.id, clientOrderId: '' };
  }

  /** Cancels aimed at the wrong owner, the wrong market, or an order id that never rested. */
  #cancelForeign(view: GeneratorView): Command {
    const rng = this.#rng;
    const n = view.restingCount();
    const o = n === 0 ? undefined : view.restingAt(rng.int(0, n - 1));
    if (o === undefined || rng.chance(30)) {
      return {
        type: 'CancelOrder',
        userId: this.#user(),
        market: this.#market().name,
        orderId: rng.int(1, 1e6),
        clientOrderId: '',
      };
    }
    if (rng.chance(50)) {
      return {
        type: 'CancelOrder',
        userId: (o.userId % this.#users) + 1,
        market: o.market,
        orderId: o.id,
        clientOrderId: '',
      };
    }
    const other = this.#markets.find((m) => m.name !== o.market) as MarketPlan;
    return { type: 'CancelOrder', userId: o.userId, market: other.name, orderId: o.id, clientOrderId: '' };
  }

  #cancelClientId(): Command {
    return {
      type: 'CancelOrder',
      userId: this.#user(),
      market: this.#market().name,
      orderId: 0,
      clientOrderId: this.#rng.pick(CLIENT_IDS),
    };
  }

  #cancelMalformed(): Command {
    const rng = this.#rng;
    const base = { type: 'CancelOrder' as const, userId: this.#user(), market: this.#market().name };
    switch (rng.int(0, 3)) {
      case 0:
        return { ...base, orderId: 0, clientOrderId: '' };
      case 1:
        return { ...base, orderId: rng.int(1, 100), clientOrderId: rng.pick(CLIENT_IDS) };
      case 2:
        return { ...base, market: 'foo_bar', orderId: rng.int(1, 100), clientOrderId: '' };
      default:
        return { ...base, userId: 999, orderId: rng.int(1, 100), clientOrderId: '' };
    }
  }

  #newDeposit(userId: number, coin: string, amount: number): Command {
    const plan = { id: `dep${++this.#depositSerial}`, userId, coin, amount };
    this.#deposits.push(plan);
    return { type: 'CreditDeposit', depositId: plan.id, userId, coin, amount, remark: '' };
  }

  #deposit(): Command {
    const rng = this.#rng;
    const r = rng.next() % 100;
    const again = rng.pick(this.#deposits);
    const fresh = { type: 'CreditDeposit' as const, depositId: `dep${this.#depositSerial + 1}x`, remark: '' };
    if (r < 55) {
      const coin = rng.pick(this.#coins);
      return this.#newDeposit(this.#user(), coin, rng.int(1, Math.floor((RICH[coin] as number) / 20)));
    }
    if (r < 65)
      return { ...fresh, depositId: again.id, userId: again.userId, coin: again.coin, amount: again.amount };
    if (r < 72)
      return {
        ...fresh,
        depositId: again.id,
        userId: again.userId,
        coin: again.coin,
        amount: again.amount + 1,
      };
    if (r < 76)
      return {
        ...fresh,
        depositId: again.id,
        userId: (again.userId % this.#users) + 1,
        coin: again.coin,
        amount: again.amount,
      };
    // A huge credit of an untraded coin: the second one would leave the exact range.
    if (r < 80) return this.#newDeposit(this.#user(), 'xwc', 2 ** 52 + rng.int(0, 1000));
    if (r < 84)
      return {
        ...fresh,
        userId: this.#user(),
        coin: rng.pick(['bchabc', 'bchsv', 'hsr', 'nxwc']),
        amount: 100,
      };
    if (r < 88) return { ...fresh, userId: this.#user(), coin: rng.pick(['foo', 'BTC', '']), amount: 100 };
    if (r < 92)
      return { ...fresh, userId: this.#user(), coin: 'btc', amount: rng.pick([0, -5, 1.5, 2 ** 53]) };
    if (r < 96) return { ...fresh, userId: 999, coin: 'btc', amount: 100 };
    return { ...fresh, depositId: '', userId: this.#user(), coin: 'btc', amount: 100 };
  }

  #chainPlan(): ChainPlan {
    return this.#rng.pick(this.#chains);
  }

  /** Chain deposit reports: new outputs, rising confirmations, failures, repeats, conflicts and bad ones. */
  #chainDeposit(): Command {
    const rng = this.#rng;
    const r = rng.next() % 100;
    const known = this.#chainDeposits.length > 0 ? rng.pick(this.#chainDeposits) : undefined;
    if (r < 35 || known === undefined) {
      const { coin, chain } = this.#chainPlan();
      const user = this.#user();
      const plan: ChainDepositPlan = {
        coin,
        chain,
        txHash: `tx${String(++this.#txSerial).padStart(10, '0')}`,
        ...depositAddress(coin, chain, user),
        amount: rng.int(1, Math.floor((RICH[coin] as number) / 20)),
        confirmations: rng.chance(20) ? rng.int(chain.confirmations, chain.confirmations * 2) : rng.int(0, 2),
      };
      this.#chainDeposits.push(plan);
      return this.#report(plan, plan.confirmations, rng.chance(3));
    }
    if (r < 75) {
      known.confirmations += rng.int(0, Math.max(1, Math.ceil(known.chain.confirmations / 3)));
      return this.#report(known, known.confirmations, rng.chance(4));
    }
    if (r < 83) return this.#report(known, known.confirmations, false);
    if (r < 87) return { ...this.#report(known, known.confirmations, false), amount: known.amount + 1 };
    if (r < 90) return { ...this.#report(known, known.confirmations + 1, false), address: 'nobody-address' };
    if (r < 92) return { ...this.#report(known, 1, false), chain: 'NOPE' };
    if (r < 94)
      return { ...this.#report(known, 1, false), txHash: rng.pick(['', 'short', 'has space here']) };
    if (r < 96) return { ...this.#report(known, 1, false), output: rng.pick([-1, 0.5]) };
    if (r < 98) return { ...this.#report(known, rng.pick([-1, 1.5]), false) };
    return { ...this.#report(known, 1, false), coin: rng.pick(['doge', 'bchabc']) };
  }

  #report(plan: ChainDepositPlan, confirmations: number, failed: boolean): ReportDeposit {
    return {
      type: 'ReportDeposit',
      coin: plan.coin,
      chain: plan.chain.name,
      txHash: plan.txHash,
      output: 0,
      address: plan.address,
      memo: plan.memo,
      amount: plan.amount,
      confirmations,
      failed,
    };
  }

  /** Withdraw requests: mostly valid (external or internal), some breaking one rule each. */
  #withdrawal(view: GeneratorView): Command {
    const rng = this.#rng;
    const userId = this.#user();
    const { coin, chain } = this.#chainPlan();
    const available = view.balance(userId, coin)?.available ?? 0;
    const internal = rng.chance(25);
    const address = internal
      ? bookForm(depositAddress(coin, chain, (userId % this.#users) + 1))
      : externalAddress(coin, chain, userId);
    const amount = rng.chance(10)
      ? available + rng.int(1, 1000)
      : Math.max(chain.minWithdraw, Math.floor(available / rng.int(3, 50)));
    const good = {
      type: 'RequestWithdrawal' as const,
      userId,
      coin,
      address,
      amount,
      fee: internal && rng.chance(50) ? 0 : chain.withdrawFee,
      itransfer: internal ? rng.chance(80) : rng.chance(10),
    };
    switch (rng.int(0, 15)) {
      case 0:
        return { ...good, fee: chain.withdrawFee + 1 };
      case 1:
        return { ...good, amount: Math.max(1, chain.minWithdraw - 1) };
      case 2:
        return { ...good, address: externalAddress(coin, chain, 99) };
      case 3:
        return { ...good, address: bookForm(depositAddress(coin, chain, userId)) };
      case 4:
        return rng.pick([
          { ...good, userId: 999 },
          { ...good, coin: rng.pick(['doge', 'hsr', '']) },
          { ...good, amount: rng.pick([0, -1, 0.5]) },
          { ...good, fee: rng.pick([-1, 0.5]) },
          { ...good, itransfer: 'yes' as unknown as boolean },
        ]);
      default:
        return good;
    }
  }

  /** Moves a known withdrawal along (or tries a transition its state does not allow). */
  #withdrawalStep(view: GeneratorView): Command {
    const rng = this.#rng;
    const ids = view.withdrawalIds();
    if (ids.length === 0 || rng.chance(3))
      return { type: 'ApproveWithdrawal', withdrawalId: rng.pick(['0', '999999', '']) };
    // Mostly the latest ones, which are still moving.
    const withdrawalId = ids[Math.max(0, ids.length - 1 - (rng.next() % Math.min(ids.length, 12)))] as string;
    const state = view.withdrawalState(withdrawalId);
    const r = rng.next() % 100;
    const owner = this.#user();
    const confirm = (confirmations: number): Command => ({
      type: 'ConfirmWithdrawal',
      withdrawalId,
      confirmations,
    });
    const fail: Command = { type: 'FailWithdrawal', withdrawalId, reason: 'the transaction failed on chain' };
    if (r < 8) {
      return rng.pick<Command>([
        { type: 'ApproveWithdrawal', withdrawalId },
        { type: 'SendWithdrawal', withdrawalId },
        {
          type: 'MarkWithdrawalSent',
          withdrawalId,
          txHash: rng.pick(['', 'bad hash', `wtx${withdrawalId}xxxxxxxx`]),
        },
        confirm(rng.pick([1, 100, -1])),
        { type: 'CancelWithdrawal', withdrawalId, userId: owner },
        { type: 'FailWithdrawal', withdrawalId, reason: rng.pick(['', 'x'.repeat(201), 'stuck']) },
      ]);
    }
    switch (state) {
      case 'submitted':
        return r < 70
          ? { type: 'ApproveWithdrawal', withdrawalId }
          : { type: 'CancelWithdrawal', withdrawalId };
      case 'approved':
        if (r < 75) return { type: 'SendWithdrawal', withdrawalId };
        return r < 88
          ? { type: 'CancelWithdrawal', withdrawalId, userId: owner }
          : { type: 'CancelWithdrawal', withdrawalId };
      case 'sending':
        return r < 90
          ? { type: 'MarkWithdrawalSent', withdrawalId, txHash: `wtx${withdrawalId.padStart(8, '0')}` }
          : { ...fail, reason: 'could not be broadcast' };
      case 'sent':
      case 'confirmed':
        return r < 85 ? confirm(rng.int(0, 25)) : fail;
      default:
        return r < 50 ? confirm(rng.int(1, 25)) : { type: 'CancelWithdrawal', withdrawalId };
    }
  }

  /** Wrong fund passwords (five in a day lock withdrawals), and now and then a reset. */
  #fundPassword(): Command {
    const rng = this.#rng;
    if (rng.chance(15))
      return { type: 'SetFundPassword', userId: this.#user(), hash: rng.chance(10) ? '' : 'reset' };
    return { type: 'RecordFundPasswordFailure', userId: rng.chance(5) ? 999 : this.#user() };
  }

  /** Withdrawal book changes: new external addresses (verified later or never), and bad ones. */
  #withdrawBook(): Command {
    const rng = this.#rng;
    const userId = this.#user();
    const { coin, chain } = this.#chainPlan();
    const address = externalAddress(coin, chain, rng.int(100, 130));
    const r = rng.next() % 100;
    if (r < 45) return { type: 'AddWithdrawAddress', userId, coin, chain: chain.name, address };
    if (r < 85) return { type: 'VerifyWithdrawAddress', userId, coin, address };
    return rng.pick<Command>([
      { type: 'AddWithdrawAddress', userId, coin, chain: chain.name, address: 'bad address!' },
      { type: 'AddWithdrawAddress', userId, coin, chain: 'NOPE', address },
      { type: 'AddWithdrawAddress', userId: 999, coin, chain: chain.name, address },
    ]);
  }

  #marketStatus(): Command {
    const rng = this.#rng;
    if (rng.chance(10)) return { type: 'SetMarketStatus', market: 'foo_bar', status: 'halted' };
    if (rng.chance(5))
      return { type: 'SetMarketStatus', market: this.#market().name, status: 'closed' as 'halted' };
    const halted = [...this.#halted];
    if (halted.length > 0) {
      const name = rng.pick(halted);
      this.#halted.delete(name);
      return { type: 'SetMarketStatus', market: name, status: 'trading' };
    }
    const name = this.#market().name;
    // Mostly a no-op resume, so that markets are halted for a small share of the run.
    if (rng.chance(80)) return { type: 'SetMarketStatus', market: name, status: 'trading' };
    this.#halted.add(name);
    return { type: 'SetMarketStatus', market: name, status: 'halted' };
  }

  /** Orders refused for one reason each, in the engine's check order. */
  #invalidOrder(view: GeneratorView): Command {
    const rng = this.#rng;
    const good = this.#order(view, rng.pick(['limit', 'postOnly', 'ioc'] as const));
    const m = this.#markets.find((p) => p.name === good.market) as MarketPlan;
    switch (rng.int(0, 13)) {
      case 0:
        return { ...good, price: 0 };
      case 1:
        return { ...good, market: rng.pick(['foo_bar', 'bchabc_usdt', 'BTC_USDT']) };
      case 2:
        return { ...good, acctType: rng.pick([1, 2] as const) };
      case 3:
        return { ...good, acctType: 3 as AcctType };
      case 4:
        return { ...good, amount: Math.floor(1e15 / Math.max(1, good.price)) };
      case 5: {
        const strict = this.#markets.find((p) => p.minAmount > 1);
        return strict === undefined
          ? { ...good, amount: 0 }
          : { ...good, market: strict.name, amount: rng.int(1, strict.minAmount - 1) };
      }
      case 6:
        return { ...good, amount: m.minAmount, price: 1 };
      case 7:
        return { ...good, userId: 999 };
      case 8:
        return { ...good, clientOrderId: rng.pick(INVALID_CLIENT_IDS) };
      case 9:
        return { ...good, side: 2 as Side };
      case 10:
        return { ...good, kind: 'market' as OrderKind };
      case 11:
        return { ...good, price: 2 ** 40, amount: 2 ** 20 };
      case 12:
        return { ...good, price: -good.price };
      default:
        return { ...good, amount: 0.5 };
    }
  }

  /**
   * AddSubUser: mostly a new sub-account of a main user registered at the start (which succeeds,
   * so the next user id is its), else refusals: a sub-account as the main user, an unknown one, a
   * taken name (in another case too), a bad memo or password hash.
   */
  #subAccount(): Command {
    const rng = this.#rng;
    const r = rng.next() % 100;
    const main = rng.int(1, this.#mainUsers);
    const add = { type: 'AddSubUser', mainUserId: main, memo: 'desk', passwordHash: 'hash-sub' } as const;
    if (r < 70) {
      this.#users++;
      this.#subs.set(this.#users, main);
      return { ...add, name: `sub${this.#users}` };
    }
    const sub = this.#subs.size > 0 ? rng.pick([...this.#subs.keys()]) : 999;
    if (r < 78) return { ...add, mainUserId: sub, name: `deep${rng.int(1, 9)}` };
    if (r < 82) return { ...add, mainUserId: 999, name: 'nobody1' };
    if (r < 90) return { ...add, name: rng.pick(['user1', 'USER2', `SUB${sub}`, 'bad name', '']) };
    if (r < 95) return { ...add, name: 'memo1', memo: 'x'.repeat(65) };
    return { ...add, name: 'hash1', passwordHash: '' };
  }

  /**
   * TransferFunds within a family (main ↔ sub, sub ↔ sub) of a small or too large amount, or a
   * refused one: across families, to oneself, asked by a sub-account, an unknown coin, a bad amount.
   */
  #subTransfer(): Command {
    const rng = this.#rng;
    if (this.#subs.size === 0) return this.#subAccount();
    const sub = rng.pick([...this.#subs.keys()]);
    const main = this.#subs.get(sub) as number;
    const family = [main, ...[...this.#subs].filter(([, m]) => m === main).map(([s]) => s)];
    const coin = rng.pick(this.#coins);
    const from = rng.pick(family);
    const to = rng.pick(family.filter((u) => u !== from));
    const amount = rng.chance(80)
      ? rng.int(1, Math.floor((RICH[coin] as number) / 50))
      : (RICH[coin] as number) * 10;
    const t = {
      type: 'TransferFunds',
      mainUserId: main,
      fromUserId: from,
      toUserId: to,
      coin,
      amount,
    } as const;
    const r = rng.next() % 100;
    if (r < 80) return t;
    if (r < 84) return { ...t, toUserId: this.#user() };
    if (r < 87) return { ...t, toUserId: from };
    if (r < 90) return { ...t, mainUserId: sub };
    if (r < 93) return { ...t, coin: rng.pick(['nope', 'bchabc']) };
    return { ...t, amount: rng.pick([0, -5, 0.5]) };
  }

  #register(): Command {
    const rng = this.#rng;
    const r = rng.next() % 100;
    if (r < 40 && this.#users < 10) {
      this.#users++;
      return { type: 'RegisterUser', name: `user${this.#users}` };
    }
    if (r < 70) return { type: 'RegisterUser', name: `user${this.#user()}` };
    return { type: 'RegisterUser', name: rng.pick(['', 'bad name', 'x'.repeat(65), 'ünï']) };
  }
}

/** The generator's deposit address of a user on a chain: an account and a memo on memo chains. */
function depositAddress(coin: string, chain: ChainSpec, userId: number): { address: string; memo: string } {
  return chain.memo
    ? { address: `acct.${coin}`, memo: String(100 + userId) }
    : { address: `dep-${coin}-${chain.name}-${userId}`, memo: '' };
}

/** A deposit address as a withdrawal book writes it. */
function bookForm(a: { address: string; memo: string }): string {
  return a.memo === '' ? a.address : `${a.address}_${a.memo}`;
}

/** An address outside the venue. */
function externalAddress(coin: string, chain: ChainSpec, n: number): string {
  return chain.memo ? `ext.${coin}_${n}` : `ext-${coin}-${chain.name}-${n}`;
}
