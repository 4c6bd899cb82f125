/** @module engine-stream — a seeded, realistic mixed command stream on btc_usdt for the engine benchmark */
import { DEFAULT_VENUE } from '../src/config/default-venue.ts';
import {
  BUY,
  SELL,
  type AcctType,
  type Command,
  type OrderKind,
  type SequencedCommand,
  type Side,
} from '../src/domain/commands.ts';
import { ORDER_CANCELLED, ORDER_DONE } from '../src/domain/events.ts';
import { Engine } from '../src/engine/engine.ts';

export const MARKET = 'btc_usdt';
/** Ticks of 0.01 usdt: 30,000.00 usdt per btc. */
export const START_PRICE_TICKS = 3_000_000;
/** Lots of 0.0001 btc: sizes are log-uniform in 0.002 … 0.5 btc, as retail and bots mix. */
const MIN_LOTS = 20;
const MAX_LOTS = 5_000;
/** The first command's time (ms); each command is 1 ms after the one before. */
const START_TIME_MS = 1_700_000_000_000;
/** The venue holds at most 2^53 − 1 units of a coin; deposits leave headroom under it. */
const VENUE_COIN_UNITS_BUDGET = 6e15;

export interface StreamOptions {
  readonly seed: number;
  /** Traders; orders pick one uniformly, so self-trade prevention triggers about 1 fill in `users`. */
  readonly users: number;
  /** Resting orders placed before the stream and kept about that many during it. */
  readonly resting: number;
  /** Commands in the (timed) stream. */
  readonly commands: number;
  /** Mean distance of a new resting order from the mid, in ticks (exponentially distributed). */
  readonly meanDistanceTicks: number;
  /** Share of users paying fees in the platform coin (zb), which takes the converted-fee path. */
  readonly platformCoinShare: number;
  /** Compute the engine's state hash after the stream, so replays can be checked against it. */
  readonly hash: boolean;
  /** Trade a share of the orders on margin (issue 14); absent: a spot-only stream. */
  readonly margin?: MarginStreamOptions;
}

/**
 * The margin stream: every user gets an isolated btc_usdt and a cross account (so `users` × 2 open
 * margin accounts), funded from spot, with express borrowing on (and auto-repayment when asked)
 * and one small loan each from the lending pool, which rolls over; `share` of the orders trade on margin (isolated or cross at
 * random); every `interestEvery` commands the clock jumps an hour and a FireTimers charges every
 * loan's interest.
 */
export interface MarginStreamOptions {
  readonly share: number;
  readonly interestEvery: number;
  /** Turn every account's auto-repayment on too (the brief's stream asks only for express). */
  readonly autoRepay: boolean;
}

/** What a margin stream did besides trading. */
export interface MarginSummary {
  readonly accounts: number;
  readonly marginOrders: number;
  /** Margin orders that borrowed (express) and fills that repaid (auto-repay). */
  readonly expressBorrows: number;
  readonly autoRepays: number;
  readonly interestTicks: number;
  /** Results of the margin orders. */
  readonly results: Record<string, number>;
}

/** About exchange-core's mix, with moves replaced by cancel + place: ~10,000 resting orders. */
export const DEFAULT_STREAM: StreamOptions = {
  seed: 20_240_601,
  users: 500,
  resting: 10_000,
  commands: 1_000_000,
  meanDistanceTicks: 300,
  platformCoinShare: 0.1,
  hash: true,
};

/** Nominal shares of the stream's commands (the resting-count control shifts a few percent). */
const MIX = { place: 0.4, postOnly: 0.05, crossing: 0.1, ioc: 0.1, cancel: 0.35 } as const;
/** Shares of PostOnly orders priced to take (refused) and of cancels aimed at a finished order. */
const POST_ONLY_TAKING_SHARE = 0.1;
const STALE_CANCEL_SHARE = 0.01;

export type StreamKind = keyof typeof MIX | 'staleCancel' | 'interest';

export interface StreamSummary {
  readonly setupCommands: number;
  readonly commands: number;
  /** Commands of each kind actually generated. */
  readonly kinds: Record<StreamKind, number>;
  /** Engine results over the stream (OK, POST_ONLY_WOULD_TAKE, ORDER_NOT_FOUND, …). */
  readonly results: Record<string, number>;
  readonly trades: number;
  readonly selfTradeCancels: number;
  readonly events: number;
  readonly restingAfterSetup: number;
  readonly restingMin: number;
  readonly restingMax: number;
  readonly restingAtEnd: number;
  /** Priced levels per side at the end. */
  readonly bidLevels: number;
  readonly askLevels: number;
  readonly midStartTicks: number;
  readonly midEndTicks: number;
  readonly lastSeq: number;
  /** Engine state hash after setup + stream, when `hash` was asked for. */
  readonly stateHash: string | undefined;
  readonly margin: MarginSummary | undefined;
}

export interface GeneratedStream {
  readonly options: StreamOptions;
  /** Users, deposits, fee preferences, one zb_usdt trade (so zb fees have a price), resting orders. */
  readonly setup: SequencedCommand[];
  /** The mixed stream to time. */
  readonly commands: SequencedCommand[];
  /** For each entry of `setup` / `commands`: the order id the engine assigns a placement, else 0. */
  readonly setupOrderIds: Int32Array;
  readonly orderIds: Int32Array;
  readonly summary: StreamSummary;
}

/** A fresh engine on the default venue. */
export function createEngine(): Engine {
  return new Engine(DEFAULT_VENUE);
}

/** sfc32: a small, fast, seeded generator (no Math.random, so streams replay exactly). */
export function sfc32(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4_294_967_296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/** The orders resting in the generator's engine, for picking cancel targets uniformly. */
class LiveOrders {
  readonly ids: number[] = [];
  readonly users: number[] = [];
  readonly #index = new Map<number, number>();
  /** Recently finished orders, for the few cancels that race a fill. */
  readonly finished: { id: number; userId: number }[] = [];

  get size(): number {
    return this.ids.length;
  }

  add(id: number, userId: number): void {
    this.#index.set(id, this.ids.length);
    this.ids.push(id);
    this.users.push(userId);
  }

  remove(id: number): void {
    const i = this.#index.get(id);
    if (i === undefined) return;
    const userId = this.users[i] as number;
    const lastId = this.ids.pop() as number;
    const lastUser = this.users.pop() as number;
    if (i < this.ids.length) {
      this.ids[i] = lastId;
      this.users[i] = lastUser;
      this.#index.set(lastId, i);
    }
    this.#index.delete(id);
    if (this.finished.length >= 1024) this.finished.length = 0;
    this.finished.push({ id, userId });
  }
}

const placeOrder = (
  userId: number,
  side: Side,
  kind: OrderKind,
  price: number,
  amount: number,
  seq: number,
  acctType: AcctType = 0,
  offsetMs = 0,
): SequencedCommand => ({
  type: 'PlaceOrder',
  userId,
  market: MARKET,
  side,
  kind,
  price,
  amount,
  acctType,
  clientOrderId: '',
  seq,
  time: START_TIME_MS + seq + offsetMs,
});

const cancelOrder = (userId: number, orderId: number, seq: number, offsetMs = 0): SequencedCommand => ({
  type: 'CancelOrder',
  userId,
  market: MARKET,
  orderId,
  clientOrderId: '',
  seq,
  time: START_TIME_MS + seq + offsetMs,
});

const HOUR_MS = 3_600_000;

/**
 * Generates setup and stream by running them through a private engine, so that every cancel names
 * an order id the engine really assigned and (but for the stale share) one still resting. Replaying
 * `setup` then `commands` on a fresh engine reproduces exactly the same results and state.
 */
export function generateStream(options: StreamOptions = DEFAULT_STREAM): GeneratedStream {
  const rng = sfc32(options.seed);
  const engine = createEngine();
  const live = new LiveOrders();
  const setup: SequencedCommand[] = [];
  const setupOrderIds: number[] = [];
  let seq = 0;

  const lots = (): number => Math.floor(MIN_LOTS * Math.exp(rng() * Math.log(MAX_LOTS / MIN_LOTS)));
  const distance = (): number => Math.floor(-Math.log(1 - rng()) * options.meanDistanceTicks);
  const user = (): number => 1 + Math.floor(rng() * options.users);

  /** Applies a setup command in the generator engine; resting orders join the live set. */
  const setupCommand = (cmd: SequencedCommand): void => {
    const r = engine.apply(cmd);
    if (r.result !== 'OK') throw new Error(`setup command ${cmd.seq} (${cmd.type}) refused: ${r.result}`);
    for (const e of r.events) {
      if (e.type === 'OrderUpdated' && (e.status === ORDER_DONE || e.status === ORDER_CANCELLED))
        live.remove(e.orderId);
    }
    const orderId = r.orderId ?? 0;
    // Only btc_usdt orders are cancel targets (the zb_usdt pair trades away at once anyway).
    if (cmd.type === 'PlaceOrder' && cmd.market === MARKET && engine.openOrder(orderId) !== undefined)
      live.add(orderId, cmd.userId);
    setup.push(cmd);
    setupOrderIds.push(orderId);
  };

  // Users and their funds: every user can rest a full share of the book on either side.
  const usdtPerUser = Math.min(10_000_000_000_000, Math.floor(VENUE_COIN_UNITS_BUDGET / options.users));
  const margin = options.margin;
  const btcPerUser = 100_000_000_000; // 1,000 btc
  const zbPerUser = Math.min(100_000_000_000_000, Math.floor(VENUE_COIN_UNITS_BUDGET / options.users));
  for (let u = 1; u <= options.users; u++) {
    setupCommand({ type: 'RegisterUser', name: `trader${u}`, seq: ++seq, time: START_TIME_MS + seq });
    const deposit = (coin: string, amount: number): void =>
      setupCommand({
        type: 'CreditDeposit',
        depositId: `${coin}-${u}`,
        userId: u,
        coin,
        amount,
        remark: '',
        seq: ++seq,
        time: START_TIME_MS + seq,
      });
    deposit('usdt', usdtPerUser);
    deposit('btc', btcPerUser);
    if (rng() < options.platformCoinShare) {
      deposit('zb', zbPerUser);
      setupCommand({
        type: 'SetFeePreference',
        userId: u,
        usePlatformCoin: true,
        seq: ++seq,
        time: START_TIME_MS + seq,
      });
    }
  }
  // One zb_usdt trade gives zb a price, so platform-coin fees convert btc → usdt → zb.
  const zbTrade = (userId: number, side: Side): void =>
    setupCommand({
      type: 'PlaceOrder',
      userId,
      market: 'zb_usdt',
      side,
      kind: 'limit',
      price: 5_000,
      amount: 10_000,
      acctType: 0,
      clientOrderId: '',
      seq: ++seq,
      time: START_TIME_MS + seq,
    });
  if (options.users >= 2) {
    setupCommand({
      type: 'CreditDeposit',
      depositId: 'zb-maker',
      userId: 1,
      coin: 'zb',
      amount: 1_000_000_000_000,
      remark: '',
      seq: ++seq,
      time: START_TIME_MS + seq,
    });
    zbTrade(1, SELL);
    zbTrade(2, BUY);
  }

  // Margin: the pool lends usdt and btc; each user funds both margin accounts, turns express and
  // auto-repay on, and borrows 100 usdt in each (an open loan per account for the interest ticks).
  if (margin !== undefined) {
    const at = (cmd: Command): SequencedCommand =>
      ({ ...cmd, seq: ++seq, time: START_TIME_MS + seq }) as SequencedCommand;
    setupCommand(
      at({
        type: 'FundLendingPool',
        fundingId: 'pool-usdt',
        coin: 'usdt',
        amount: 1e15,
        dailyRatePpm: 500,
        days: 30,
      }),
    );
    setupCommand(
      at({
        type: 'FundLendingPool',
        fundingId: 'pool-btc',
        coin: 'btc',
        amount: 1e13,
        dailyRatePpm: 500,
        days: 30,
      }),
    );
    for (let u = 1; u <= options.users; u++) {
      for (const [acctType, market] of [
        [1, MARKET],
        [2, ''],
      ] as const) {
        const account = { userId: u, acctType, market };
        setupCommand(
          at({ type: 'MarginTransfer', ...account, direction: 'in', coin: 'usdt', amount: 20_000_000_000 }),
        );
        setupCommand(
          at({ type: 'MarginTransfer', ...account, direction: 'in', coin: 'btc', amount: 100_000_000 }),
        );
        setupCommand(
          at({ type: 'SetMarginPreferences', ...account, express: true, autoRepay: margin.autoRepay }),
        );
        setupCommand(at({ type: 'Borrow', ...account, coin: 'usdt', amount: 100_000_000, rollOver: true }));
      }
    }
  }
  let offsetMs = 0;
  const marginResults: Record<string, number> = {};
  let marginOrders = 0;
  let expressBorrows = 0;
  let autoRepays = 0;
  let interestTicks = 0;

  // The resting book: alternate sides around the starting mid, never crossing.
  for (let i = 0; i < options.resting; i++) {
    const side: Side = i % 2 === 0 ? BUY : SELL;
    const d = 1 + distance();
    const price = side === BUY ? START_PRICE_TICKS - d : START_PRICE_TICKS + d;
    ++seq;
    setupCommand(placeOrder(user(), side, 'limit', price, lots(), seq));
  }
  const restingAfterSetup = live.size;

  // The stream. `mid` is the fair price, a random walk the traders follow.
  let mid = START_PRICE_TICKS;
  const commands: SequencedCommand[] = [];
  const orderIds = new Int32Array(options.commands);
  const kinds: Record<StreamKind, number> = {
    place: 0,
    postOnly: 0,
    crossing: 0,
    ioc: 0,
    cancel: 0,
    staleCancel: 0,
    interest: 0,
  };
  const results: Record<string, number> = {};
  let restingMin = live.size;
  let restingMax = live.size;
  let trades = 0;
  let selfTradeCancels = 0;
  let events = 0;
  const high = options.resting * 1.01;
  const low = options.resting * 0.99;

  for (let i = 0; i < options.commands; i++) {
    const step = Math.floor(rng() * 5);
    mid += rng() < 0.5 ? -step : step;
    const depth = engine.depth(MARKET, 1);
    const bestBid = depth?.bids[0]?.[0];
    const bestAsk = depth?.asks[0]?.[0];

    let r = rng();
    let kind: StreamKind =
      r < MIX.place
        ? 'place'
        : (r -= MIX.place) < MIX.postOnly
          ? 'postOnly'
          : (r -= MIX.postOnly) < MIX.crossing
            ? 'crossing'
            : (r -= MIX.crossing) < MIX.ioc
              ? 'ioc'
              : 'cancel';
    // Keep the book near its target size: trade places for cancels and back at the edges.
    if (live.size > high && (kind === 'place' || kind === 'postOnly')) kind = 'cancel';
    else if (live.size < low && kind === 'cancel') kind = 'place';
    if (kind === 'cancel' && live.size === 0) kind = 'place';
    if (kind === 'cancel' && rng() < STALE_CANCEL_SHARE && live.finished.length > 0) kind = 'staleCancel';
    if (margin !== undefined && i % margin.interestEvery === margin.interestEvery - 1) kind = 'interest';
    const acctType: AcctType =
      margin !== undefined && kind !== 'cancel' && kind !== 'staleCancel' && rng() < margin.share
        ? rng() < 0.5
          ? 1
          : 2
        : 0;

    let cmd: SequencedCommand;
    ++seq;
    if (kind === 'interest') {
      offsetMs += HOUR_MS;
      cmd = { type: 'FireTimers', seq, time: START_TIME_MS + seq + offsetMs };
      interestTicks++;
    } else if (kind === 'cancel') {
      const k = Math.floor(rng() * live.size);
      cmd = cancelOrder(live.users[k] as number, live.ids[k] as number, seq, offsetMs);
    } else if (kind === 'staleCancel') {
      const f = live.finished[Math.floor(rng() * live.finished.length)] as { id: number; userId: number };
      cmd = cancelOrder(f.userId, f.id, seq, offsetMs);
    } else {
      const userId = user();
      if ((kind === 'crossing' || kind === 'ioc') && (bestBid === undefined || bestAsk === undefined))
        kind = 'place';
      if (kind === 'crossing' || kind === 'ioc') {
        // Takers lean towards the fair price, which drags the book after the walk.
        const bookMid = ((bestBid as number) + (bestAsk as number)) / 2;
        const lean = Math.max(-0.4, Math.min(0.4, ((mid - bookMid) / options.meanDistanceTicks) * 0.25));
        const side: Side = rng() < 0.5 + lean ? BUY : SELL;
        const through = Math.floor(rng() * (kind === 'ioc' ? 50 : 20));
        const price = side === BUY ? (bestAsk as number) + through : (bestBid as number) - through;
        cmd = placeOrder(
          userId,
          side,
          kind === 'ioc' ? 'ioc' : 'limit',
          price,
          lots(),
          seq,
          acctType,
          offsetMs,
        );
      } else if (kind === 'postOnly') {
        const side: Side = rng() < 0.5 ? BUY : SELL;
        const taking = rng() < POST_ONLY_TAKING_SHARE;
        const gap = taking ? 0 : 1 + Math.floor(rng() * 5);
        const price = side === BUY ? (bestAsk ?? mid + 1) - gap : (bestBid ?? mid - 1) + gap;
        cmd = placeOrder(userId, side, 'postOnly', price, lots(), seq, acctType, offsetMs);
      } else {
        const side: Side = rng() < 0.5 ? BUY : SELL;
        const d = distance();
        const price =
          side === BUY
            ? Math.min(mid, (bestAsk ?? mid + 1) - 1) - d
            : Math.max(mid, (bestBid ?? mid - 1) + 1) + d;
        cmd = placeOrder(userId, side, 'limit', price, lots(), seq, acctType, offsetMs);
      }
    }
    kinds[kind]++;
    const res = engine.apply(cmd);
    results[res.result] = (results[res.result] ?? 0) + 1;
    if (acctType !== 0) {
      marginOrders++;
      marginResults[res.result] = (marginResults[res.result] ?? 0) + 1;
    }
    if (margin !== undefined && cmd.type === 'PlaceOrder') {
      let borrowed = false;
      let repaid = false;
      for (const e of res.events)
        if (e.type === 'BalanceChanged' && e.account !== undefined) {
          if (e.billType === 'borrow') borrowed = true;
          else if (e.billType === 'repayPrincipal' || e.billType === 'repayInterest') repaid = true;
        }
      if (borrowed) expressBorrows++;
      if (repaid) autoRepays++;
    }
    if (res.result === 'OK') {
      for (const e of res.events) {
        if (e.type === 'TradeExecuted') trades++;
        else if (e.type === 'OrderUpdated' && (e.status === ORDER_DONE || e.status === ORDER_CANCELLED)) {
          if (e.cancelReason === 'selfTrade') selfTradeCancels++;
          live.remove(e.orderId);
        }
      }
      events += res.events.length;
      const orderId = res.orderId ?? 0;
      orderIds[i] = orderId;
      if (orderId > 0 && cmd.type === 'PlaceOrder' && engine.openOrder(orderId) !== undefined)
        live.add(orderId, cmd.userId);
    }
    commands.push(cmd);
    if (live.size < restingMin) restingMin = live.size;
    if (live.size > restingMax) restingMax = live.size;
  }
  if (live.size !== engine.openOrderCount)
    throw new Error(`generator lost track: ${live.size} live, engine has ${engine.openOrderCount}`);

  const full = engine.depth(MARKET, Number.MAX_SAFE_INTEGER);
  return {
    options,
    setup,
    commands,
    setupOrderIds: Int32Array.from(setupOrderIds),
    orderIds,
    summary: {
      setupCommands: setup.length,
      commands: commands.length,
      kinds,
      results,
      trades,
      selfTradeCancels,
      events,
      restingAfterSetup,
      restingMin,
      restingMax,
      restingAtEnd: live.size,
      bidLevels: full?.bids.length ?? 0,
      askLevels: full?.asks.length ?? 0,
      midStartTicks: START_PRICE_TICKS,
      midEndTicks: mid,
      lastSeq: engine.lastSeq,
      stateHash: options.hash ? engine.stateHash() : undefined,
      margin:
        margin === undefined
          ? undefined
          : {
              accounts: engine.margin.accountsOf(1).length * options.users,
              marginOrders,
              expressBorrows,
              autoRepays,
              interestTicks,
              results: marginResults,
            },
    },
  };
}
