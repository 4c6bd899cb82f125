/**
 * @module replay-market — plays a replay plan (replay-plan.ts) on a running venue
 * (docs/sandbox.md, "Replay"): per market, a maker that quotes a ladder around the replayed price
 * with depth scaled to the replayed volume, and a taker that sends each historical trade as taker
 * flow. Both are ordinary users whose commands go through the sequencer like any client's (the
 * demo's set-up path, src/demo/demo-market.ts), journaled as PlaceOrder and CancelOrder.
 *
 * One historical trade (taker side, price P, amount A), in order:
 * 1. the maker's orders the trade shows the market had left are cancelled (for a buy: its asks
 *    below P and bids at or above P; a sell the other way round);
 * 2. the other users' orders the trade went through are taken whole by the taker (a buy at P takes
 *    every ask below P, an IOC at one tick better than P);
 * 3. the maker places the trade's counterpart, A at P, at the back of the queue there;
 * 4. the taker sends A at P as an IOC, whose client order id `T<replay>x<position>` is the replay's
 *    position in the journal: it takes the queue at P in time order — the maker's modelled depth
 *    and other users' orders that were there first, then the counterpart;
 * 5. what is left of the counterpart is cancelled.
 * So a user's resting order fills when, and only when, the history trades through its price, or at
 * its price once the orders ahead of it are used up. The user's fills change nothing of later
 * history (no market impact). Commands are submitted without waiting for each (the sequencer
 * orders them; a group commit makes many durable at once), so a replay keeps up at 1,000×.
 */
import type { Command } from '../domain/commands.ts';
import { BUY, SELL, type Side } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { MarketSpec } from '../domain/specs.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import type { PlannedTrade, ReplayPlan } from './replay-plan.ts';

/** Levels per side of a maker's ladder. */
const LADDER_LEVELS = 8;
/** Distance between ladder levels: a fraction of the first replayed price, in ppm (0.02%). */
const LEVEL_GAP_PPM = 200;
/** A level's size: this share of the replayed volume of the last VOLUME_WINDOW_MS, deeper levels more. */
const LEVEL_SHARE = 0.2;
const VOLUME_WINDOW_MS = 60_000;
/** Commands in flight at most before the player waits for some to be applied. */
const MAX_IN_FLIGHT = 2_000;
/** Trades played at most before the player lets the event loop run. */
const YIELD_EVERY_TRADES = 16;
/** Longest sleep between looks at the clock (wall ms). */
const MAX_SLEEP_MS = 20;
/**
 * The replay's users are funded with this many times the whole plan's volume (the ladder's levels
 * together are at most about 8 × the recent volume a side), at least 1,000 minimum orders, at most
 * 2^49 units a coin; a refusal for funds tops them up.
 */
const FUNDING_FACTOR = 12n;
const FUNDING_MIN_ORDERS = 1_000n;
const MAX_FUNDING_UNITS = 2n ** 49n;

/** What the player needs of the venue. */
export interface ReplayVenue {
  readonly engine: VenueState;
  submit(command: Command): Promise<ApplyResult>;
  /** Venue time (ms). */
  now(): number;
  /** Wall ms that `venueMs` of venue time takes (a speed clock's), if known. */
  wallDelay?(venueMs: number): number;
  log(message: string): void;
}

/** The replay's users of one market. */
export const replayUserNames = (market: string): { maker: string; taker: string } => ({
  maker: `replay-maker-${market}`,
  taker: `replay-taker-${market}`,
});

/** The taker's client order id for the trade at `position`: the replay's position, journaled. */
export const positionId = (replayId: number, position: number): string => `T${replayId}x${position}`;

/** How far a replay got, from the engine alone: the first position whose taker order is not in it. */
export function playedUpTo(engine: VenueState, replayId: number, trades: readonly PlannedTrade[]): number {
  const takerOf = new Map<string, number | undefined>();
  const taker = (market: string): number | undefined => {
    if (!takerOf.has(market)) takerOf.set(market, engine.userId(replayUserNames(market).taker));
    return takerOf.get(market);
  };
  const played = (k: number): boolean => {
    const t = trades[k] as PlannedTrade;
    const userId = taker(t.market);
    return (
      userId !== undefined &&
      engine.orderIdForClientId(userId, t.market, positionId(replayId, k)) !== undefined
    );
  };
  // Positions are played in order, so the played ones are a prefix: the first unplayed by bisection.
  let lo = 0;
  let hi = trades.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (played(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface MarketPlayer {
  readonly spec: MarketSpec;
  readonly makerId: number;
  readonly takerId: number;
  /** The ladder's grid step, in ticks. */
  step: number;
  /** The maker's orders placed but not yet applied, and cancels sent but not yet applied: client id → order. */
  readonly placing: Map<string, { side: Side; price: number }>;
  readonly cancelling: Set<string>;
  /** Recent replayed trades (history time, lots), for the ladder's depth. */
  readonly recent: { time: number; lots: number }[];
  recentLots: number;
  nextLevel: number;
}

export interface ReplayProgress {
  readonly replayId: number;
  readonly played: number;
  readonly total: number;
  readonly finished: boolean;
}

/** Plays one replay from `from` until its last trade, or until stopped. */
export class ReplayPlayer {
  readonly #venue: ReplayVenue;
  readonly #replayId: number;
  readonly #plan: ReplayPlan;
  readonly #markets = new Map<string, MarketPlayer>();
  #position: number;
  /** Venue time minus history time: when a trade is due. */
  #offset = 0;
  #stopped = false;
  #inFlight = new Set<Promise<unknown>>();
  #refusals = 0;
  #done: Promise<void> | undefined;

  constructor(venue: ReplayVenue, replayId: number, plan: ReplayPlan, from: number) {
    this.#venue = venue;
    this.#replayId = replayId;
    this.#plan = plan;
    this.#position = from;
  }

  get progress(): ReplayProgress {
    const total = this.#plan.trades.length;
    return { replayId: this.#replayId, played: this.#position, total, finished: this.#position >= total };
  }

  /** Commands the engine refused so far (a top-up follows a refusal for funds). */
  get refusals(): number {
    return this.#refusals;
  }

  /**
   * Registers and funds the replay's users (once: deposits have ids), then plays from the
   * position given, the next trade due now. Resolves when the last trade's commands are applied,
   * or when stopped.
   */
  start(): Promise<void> {
    this.#done ??= this.#run();
    return this.#done;
  }

  /** Stops after the commands in flight; resolves once they are applied. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    await this.#setUp();
    const trades = this.#plan.trades;
    const next = trades[this.#position];
    if (next !== undefined) this.#offset = this.#venue.now() - next.time;
    while (!this.#stopped && this.#position < trades.length) {
      const now = this.#venue.now();
      let played = 0;
      while (this.#position < trades.length && !this.#stopped) {
        const t = trades[this.#position] as PlannedTrade;
        if (t.time + this.#offset > now) break;
        this.#play(t, this.#position);
        this.#position++;
        // Behind time, never hold the event loop: the sequencer, the API and the clients share it.
        if (++played % YIELD_EVERY_TRADES === 0) {
          if (this.#inFlight.size > MAX_IN_FLIGHT) await this.#drain(MAX_IN_FLIGHT / 2);
          else await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (this.#inFlight.size > MAX_IN_FLIGHT) await this.#drain(MAX_IN_FLIGHT / 2);
      const t = trades[this.#position];
      if (t === undefined || this.#stopped) break;
      const wait = t.time + this.#offset - this.#venue.now();
      const wall = this.#venue.wallDelay?.(wait) ?? wait;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(MAX_SLEEP_MS, wall))));
    }
    await this.#drain(0);
  }

  async #drain(below: number): Promise<void> {
    while (this.#inFlight.size > below) await Promise.race(this.#inFlight);
  }

  /** Sends a command without waiting; a refusal for funds tops the user up. */
  #send(command: Command, settled?: (r: ApplyResult | undefined) => void): void {
    const run = this.#venue.submit(command).then(
      (r) => {
        if (r.result === 'BUSY') {
          // Over the pipeline's bounds: nothing was journaled; send it again.
          this.#send(command, settled);
          return;
        }
        if (r.result !== 'OK') this.#refused(command, r);
        settled?.(r);
      },
      () => settled?.(undefined),
    );
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  #refused(command: Command, r: ApplyResult): void {
    // A cancel of a counterpart the taker used up is expected; anything else is counted and, for
    // funds, answered with a top-up.
    if (command.type === 'CancelOrder') return;
    this.#refusals++;
    if (r.result === 'INSUFFICIENT_BALANCE' && 'userId' in command && 'market' in command) {
      const p = this.#markets.get(command.market);
      if (p !== undefined) this.#fund(command.userId, p.spec, this.#refusals);
    }
  }

  /** The five steps of the module comment, for the trade at `position`. */
  #play(t: PlannedTrade, position: number): void {
    const p = this.#markets.get(t.market) as MarketPlayer;
    const { engine } = this.#venue;
    const market = t.market;
    const P = t.price;
    const buy = t.side === BUY;
    // 1. The maker's orders the market had left.
    for (const o of this.#makerOrders(p)) {
      const crossed = buy
        ? (o.side === SELL && o.price < P) || (o.side === BUY && o.price >= P)
        : (o.side === BUY && o.price > P) || (o.side === SELL && o.price <= P);
      if (crossed) this.#cancel(p, o.id);
    }
    // 2. Other users' orders the trade went through, taken whole.
    const depth = engine.depth(market, 1_000);
    if (depth !== undefined) {
      const through = buy
        ? depth.asks.filter(([price]) => price < P)
        : depth.bids.filter(([price]) => price > P);
      let lots = through.reduce((sum, [, l]) => sum + l, 0);
      for (const o of engine.openOrders(p.makerId, market))
        if (o.side !== t.side && (buy ? o.price < P : o.price > P)) lots -= o.amount - o.filled;
      if (lots > 0) {
        const price = buy ? P - 1 : P + 1;
        if (price > 0) this.#order(p.takerId, market, t.side, 'ioc', price, lots, '');
      }
    }
    // 3–5. The trade itself: the counterpart at the back of the queue at P, the taker, the rest cancelled.
    const counterpart = `C${this.#replayId}x${position}`;
    const queued = (buy ? depth?.asks : depth?.bids)?.some(([price]) => price === P) ?? false;
    this.#order(p.makerId, market, buy ? SELL : BUY, 'limit', P, t.amount, counterpart);
    this.#order(p.takerId, market, t.side, 'ioc', P, t.amount, positionId(this.#replayId, position));
    // Nothing else resting at P: the taker uses the counterpart up, and no cancel is needed.
    if (queued || [...p.placing.values()].some((o) => o.price === P))
      this.#send({ type: 'CancelOrder', userId: p.makerId, market, orderId: 0, clientOrderId: counterpart });
    this.#remember(p, t);
    this.#quote(p, P);
  }

  #order(
    userId: number,
    market: string,
    side: Side,
    kind: 'limit' | 'ioc',
    price: number,
    amount: number,
    id: string,
  ): void {
    this.#send({
      type: 'PlaceOrder',
      userId,
      market,
      side,
      kind,
      price,
      amount,
      acctType: 0,
      clientOrderId: id,
    });
  }

  #cancel(p: MarketPlayer, clientOrderId: string): void {
    if (p.cancelling.has(clientOrderId)) return;
    p.cancelling.add(clientOrderId);
    p.placing.delete(clientOrderId);
    this.#send(
      { type: 'CancelOrder', userId: p.makerId, market: p.spec.name, orderId: 0, clientOrderId },
      () => p.cancelling.delete(clientOrderId),
    );
  }

  /** The maker's orders as they will be: those applied, and those placed, less those being cancelled. */
  #makerOrders(p: MarketPlayer): { id: string; side: Side; price: number }[] {
    const out: { id: string; side: Side; price: number }[] = [];
    for (const o of this.#venue.engine.openOrders(p.makerId, p.spec.name))
      if (o.clientOrderId !== '' && !p.cancelling.has(o.clientOrderId) && !p.placing.has(o.clientOrderId))
        out.push({ id: o.clientOrderId, side: o.side, price: o.price });
    for (const [id, o] of p.placing) out.push({ id, ...o });
    return out;
  }

  #remember(p: MarketPlayer, t: PlannedTrade): void {
    p.recent.push({ time: t.time, lots: t.amount });
    p.recentLots += t.amount;
    while ((p.recent[0]?.time ?? t.time) < t.time - VOLUME_WINDOW_MS)
      p.recentLots -= (p.recent.shift() as { lots: number }).lots;
  }

  /**
   * Keeps the maker's ladder: LADDER_LEVELS grid points a side strictly beyond the price, each
   * placed once with a size of the recent volume; levels out of the ladder's reach are cancelled.
   * A level the price crossed was cancelled by the trade (step 1) and comes back behind the queue.
   */
  #quote(p: MarketPlayer, price: number): void {
    if (p.step === 0) p.step = Math.max(1, Math.round((price * LEVEL_GAP_PPM) / 1_000_000));
    const step = p.step;
    const wanted = new Map<string, { side: Side; price: number; k: number }>();
    const firstBid = Math.ceil(price / step) * step - step;
    const firstAsk = Math.floor(price / step) * step + step;
    for (let k = 0; k < LADDER_LEVELS; k++) {
      const bid = firstBid - k * step;
      if (bid > 0) wanted.set(`${BUY}:${bid}`, { side: BUY, price: bid, k });
      wanted.set(`${SELL}:${firstAsk + k * step}`, { side: SELL, price: firstAsk + k * step, k });
    }
    for (const o of this.#makerOrders(p)) {
      if (!o.id.startsWith('L')) continue;
      if (!wanted.delete(`${o.side}:${o.price}`)) this.#cancel(p, o.id);
    }
    for (const level of wanted.values()) {
      const lots = this.#levelLots(p, level.price, level.k);
      const id = `L${this.#replayId}x${p.nextLevel++}`;
      p.placing.set(id, { side: level.side, price: level.price });
      const { spec, makerId } = p;
      this.#send(
        {
          type: 'PlaceOrder',
          userId: makerId,
          market: spec.name,
          side: level.side,
          kind: 'limit',
          price: level.price,
          amount: lots,
          acctType: 0,
          clientOrderId: id,
        },
        () => p.placing.delete(id),
      );
    }
  }

  /** A level's size: LEVEL_SHARE of the recent volume, more for deeper levels, at least the market's minimum. */
  #levelLots(p: MarketPlayer, price: number, k: number): number {
    const { spec } = p;
    const quoteDecimals = this.#venue.engine.coin(spec.quote)?.unitDecimal ?? 8;
    const shift = spec.priceScale + spec.amountScale - quoteDecimals;
    const minByValue = Math.ceil(
      (spec.minSize * 10 ** Math.max(0, shift)) / (price * 10 ** Math.max(0, -shift)),
    );
    const lots = Math.round(p.recentLots * LEVEL_SHARE * (1 + k / 2));
    return Math.max(lots, spec.minAmount, minByValue, 1);
  }

  /** Registers the replay's users where they are missing and funds them for the whole plan. */
  async #setUp(): Promise<void> {
    const { engine } = this.#venue;
    const must = async (command: Command): Promise<ApplyResult> => {
      for (;;) {
        const r = await this.#venue.submit(command);
        if (r.result === 'BUSY') continue;
        if (r.result !== 'OK')
          throw new Error(`replay set-up: ${command.type} refused: ${r.result} ${r.message ?? ''}`);
        return r;
      }
    };
    for (const market of new Set(this.#plan.trades.map((t) => t.market))) {
      const spec = engine.market(market);
      if (spec === undefined) throw new Error(`replay: no market ${market}`);
      const ids: number[] = [];
      for (const name of Object.values(replayUserNames(market))) {
        let userId = engine.userId(name);
        if (userId === undefined)
          userId = (await must({ type: 'RegisterUser', name, uniqueIgnoringCase: true })).userId as number;
        ids.push(userId);
        for (const [coin, amount] of this.#funding(spec)) {
          const depositId = `replay:${this.#replayId}:${name}:${coin}`;
          if (engine.funds.deposit(depositId) === undefined)
            await must({ type: 'CreditDeposit', depositId, userId, coin, amount, remark: 'replay funds' });
        }
      }
      const [makerId, takerId] = ids as [number, number];
      this.#markets.set(market, {
        spec,
        makerId,
        takerId,
        step: 0,
        placing: new Map(),
        cancelling: new Set(),
        recent: [],
        recentLots: 0,
        nextLevel: this.#levelsPlaced(makerId, market),
      });
    }
  }

  /** Where a resumed maker's level ids go on: past any of this replay's it has resting. */
  #levelsPlaced(makerId: number, market: string): number {
    let next = 0;
    const prefix = `L${this.#replayId}x`;
    for (const o of this.#venue.engine.openOrders(makerId, market))
      if (o.clientOrderId.startsWith(prefix))
        next = Math.max(next, Number(o.clientOrderId.slice(prefix.length)) + 1);
    // Ids of levels already filled are not resting: skip well past the plan's own positions.
    return next + this.#position * 4;
  }

  /** What a replay user of `spec` gets, per coin: FUNDING_FACTOR × the whole plan's volume, within bounds. */
  #funding(spec: MarketSpec): [string, number][] {
    const { engine } = this.#venue;
    const volume = this.#plan.volume.get(spec.name) ?? { lots: 0n, quoteUnits: 0n };
    const baseDecimals = engine.coin(spec.base)?.unitDecimal ?? 8;
    const lotUnits = 10n ** BigInt(Math.max(0, baseDecimals - spec.amountScale));
    const atLeast = (units: bigint, floor: bigint): bigint => (units < floor ? floor : units);
    const cap = (units: bigint): number => Number(units > MAX_FUNDING_UNITS ? MAX_FUNDING_UNITS : units);
    const base =
      atLeast(volume.lots * FUNDING_FACTOR, BigInt(spec.minAmount) * FUNDING_MIN_ORDERS) * lotUnits;
    const quote = atLeast(volume.quoteUnits * FUNDING_FACTOR, BigInt(spec.minSize) * FUNDING_MIN_ORDERS);
    return [
      [spec.base, cap(base)],
      [spec.quote, cap(quote)],
    ];
  }

  /** A top-up after a refusal for funds: the same again, under a new deposit id. */
  #fund(userId: number, spec: MarketSpec, n: number): void {
    const name = this.#venue.engine.userName(userId) ?? String(userId);
    for (const [coin, amount] of this.#funding(spec)) {
      const depositId = `replay:${this.#replayId}:${name}:${coin}:${n}`;
      this.#send({ type: 'CreditDeposit', depositId, userId, coin, amount, remark: 'replay funds' });
    }
    this.#venue.log(`replay: ${name} topped up after a refusal for funds`);
  }
}
