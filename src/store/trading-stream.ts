/**
 * @module trading-stream — test and benchmark support for the history store: drives the real
 * engine with stamped commands and records each command's events as a journal entry, and
 * generates a seeded, realistic trading stream (limit, IOC and PostOnly orders around a drifting
 * mid price, cancels, batches, reused client order ids, dead-man timers, deposits, withdrawals).
 */
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import type { ChainSpec } from '../domain/chains.ts';
import type { VenueConfig } from '../domain/specs.ts';
import {
  BUY,
  SELL,
  type Command,
  type OrderKind,
  type SequencedCommand,
  type Side,
} from '../domain/commands.ts';
import { Engine, type ApplyResult } from '../engine/engine.ts';
import type { WithdrawalView } from '../engine/funds.ts';
import { seededRandom } from '../domain/random.ts';
import type { HistoryEntry } from './history-store.ts';

// The generator moved to src/domain/random.ts (the demo market uses it too); tests import it here.
export { seededRandom, seededUint32 } from '../domain/random.ts';

/** The real engine on the default venue, with a sequencer's stamps and a journal of entries. */
export class EngineRecorder {
  readonly engine: Engine;
  readonly entries: HistoryEntry[] = [];
  /** The stamped commands, as a sequencer would have journaled them. */
  readonly commands: SequencedCommand[] = [];
  #seq = 0;
  #time: number;

  constructor(startTime: number, config: VenueConfig = DEFAULT_VENUE) {
    this.#time = startTime;
    this.engine = new Engine(config);
  }

  get time(): number {
    return this.#time;
  }

  get seq(): number {
    return this.#seq;
  }

  /** Applies `cmd` at `time` (default: the current time) as the next sequence number. */
  apply(cmd: Command, time: number = this.#time): ApplyResult {
    this.#time = time;
    const seq = ++this.#seq;
    const sequenced = { ...cmd, seq, time } as SequencedCommand;
    this.commands.push(sequenced);
    const result = this.engine.apply(sequenced);
    this.entries.push({ seq, time, events: result.events });
    return result;
  }

  /** PlaceOrder on the spot account, at `time` (default: the current time). */
  place(
    userId: number,
    market: string,
    side: Side,
    kind: OrderKind,
    price: number,
    amount: number,
    time: number = this.#time,
    clientOrderId = '',
  ): ApplyResult {
    return this.apply(
      { type: 'PlaceOrder', userId, market, side, kind, price, amount, acctType: 0, clientOrderId },
      time,
    );
  }

  /** CancelOrder by order id (> 0) or else by client order id. */
  cancel(
    userId: number,
    market: string,
    orderId: number,
    time: number = this.#time,
    clientOrderId = '',
  ): ApplyResult {
    return this.apply({ type: 'CancelOrder', userId, market, orderId, clientOrderId }, time);
  }

  /** Registers a user and credits each of `funds` (coin → units); returns the user id. */
  fundedUser(name: string, funds: Readonly<Record<string, number>>): number {
    const r = this.apply({ type: 'RegisterUser', name });
    if (r.userId === undefined) throw new Error(`cannot register ${name}: ${r.result}`);
    for (const [coin, amount] of Object.entries(funds)) {
      const d = this.apply({
        type: 'CreditDeposit',
        depositId: `genesis-${r.userId}-${coin}`,
        userId: r.userId,
        coin,
        amount,
        remark: '',
      });
      if (d.result !== 'OK') throw new Error(`cannot fund ${name} with ${coin}: ${d.result}`);
    }
    return r.userId;
  }
}

/** Per market of the default venue: a starting mid price (ticks) and an order size range (lots). */
const MARKETS: readonly { name: string; mid: number; minLots: number; maxLots: number; weight: number }[] = [
  { name: 'btc_usdt', mid: 3_000_000, minLots: 2, maxLots: 400, weight: 45 },
  { name: 'eth_usdt', mid: 200_000, minLots: 30, maxLots: 5_000, weight: 25 },
  { name: 'eth_btc', mid: 66_000, minLots: 1, maxLots: 300, weight: 10 },
  { name: 'zb_usdt', mid: 2_500, minLots: 4_000, maxLots: 200_000, weight: 12 },
  { name: 'zb_qc', mid: 16_000, minLots: 800, maxLots: 40_000, weight: 8 },
];
const TOTAL_WEIGHT = MARKETS.reduce((s, m) => s + m.weight, 0);

/**
 * Starting funds per user, in units: plenty for trading, and small enough that the venue's total
 * of each coin stays exact (below 2^53) for a few hundred users.
 */
const STARTING_FUNDS: Readonly<Record<string, number>> = {
  usdt: 5_000_000_000_000, // 5 M USDT
  btc: 100_00_000_000, // 100 BTC
  eth: 1_000_00_000_000, // 1,000 ETH
  zb: 100_000_00_000_000, // 100,000 ZB
  qc: 5_000_000_000_000, // 5 M QC
};

export interface TradingStreamOptions {
  readonly seed: number;
  readonly users: number;
  /** Milliseconds since the epoch of the first command. */
  readonly startTime: number;
  /** Mean time between commands (ms); steps are uniform in 0..2 × mean. */
  readonly meanStepMs: number;
  /** Rest on average about this many open orders; above it, cancels become more likely. */
  readonly targetOpenOrders?: number;
}

/**
 * A seeded trading stream over the real engine. `setup()` registers and funds the users;
 * each `step()` issues one command (sometimes a timer or funds command) and records it.
 */
export class TradingStream {
  readonly recorder: EngineRecorder;
  readonly users: number[] = [];
  readonly #random: () => number;
  readonly #options: TradingStreamOptions;
  readonly #mids = new Map<string, number>();
  /** Ids of withdrawals the stream has requested that have not ended yet. */
  readonly #pendingWithdrawals: string[] = [];
  #nextFundsId = 1;

  constructor(options: TradingStreamOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    this.recorder = new EngineRecorder(options.startTime);
    for (const m of MARKETS) this.#mids.set(m.name, m.mid);
  }

  setup(): void {
    const rec = this.recorder;
    for (let i = 0; i < this.#options.users; i++) {
      const userId = rec.fundedUser(`trader${i + 1}`, STARTING_FUNDS);
      this.users.push(userId);
      if (this.#random() < 0.3) rec.apply({ type: 'SetFeePreference', userId, usePlatformCoin: true });
      rec.apply({ type: 'SetFundPassword', userId, hash: 'stream' });
      for (const coin of Object.keys(STARTING_FUNDS)) {
        const chain = (rec.engine.funds.coinFunds(coin)?.chains[0] as ChainSpec).name;
        const address = externalAddress(coin, userId);
        rec.apply({ type: 'AddWithdrawAddress', userId, coin, chain, address });
        rec.apply({ type: 'VerifyWithdrawAddress', userId, coin, address });
      }
    }
  }

  /**
   * Moves a pending withdrawal one step along its way: approved (if it waits), claimed, sent,
   * then confirmed until it has succeeded; some are cancelled before sending or fail after.
   */
  #advanceWithdrawal(time: number): ApplyResult {
    const rec = this.recorder;
    const pending = this.#pendingWithdrawals;
    const i = this.#int(0, pending.length - 1);
    const withdrawalId = pending[i] as string;
    const w = rec.engine.funds.withdrawal(withdrawalId) as WithdrawalView;
    const chain = rec.engine.funds.chain(w.coin, w.chain) as ChainSpec;
    const early = this.#random() < 0.15;
    let cmd: Command;
    switch (w.state) {
      case 'submitted':
        cmd = early
          ? { type: 'CancelWithdrawal', withdrawalId }
          : { type: 'ApproveWithdrawal', withdrawalId };
        break;
      case 'approved':
        cmd = early
          ? { type: 'CancelWithdrawal', withdrawalId, userId: w.userId }
          : { type: 'SendWithdrawal', withdrawalId };
        break;
      case 'sending':
        cmd = { type: 'MarkWithdrawalSent', withdrawalId, txHash: `tx${withdrawalId.padStart(16, '0')}` };
        break;
      default:
        cmd = early
          ? { type: 'FailWithdrawal', withdrawalId, reason: 'the transaction failed on chain' }
          : {
              type: 'ConfirmWithdrawal',
              withdrawalId,
              confirmations: Math.min(chain.confirmations, w.confirmations + 6),
            };
    }
    const result = rec.apply(cmd, time);
    const state = rec.engine.funds.withdrawal(withdrawalId)?.state;
    if (state === 'succeeded' || state === 'failed' || state === 'cancelled') pending.splice(i, 1);
    return result;
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  #pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#random() * xs.length)] as T;
  }

  #market(): (typeof MARKETS)[number] {
    let r = this.#random() * TOTAL_WEIGHT;
    for (const m of MARKETS) {
      r -= m.weight;
      if (r < 0) return m;
    }
    return MARKETS[0] as (typeof MARKETS)[number];
  }

  /** Issues one command; returns its result. */
  step(): ApplyResult {
    const rec = this.recorder;
    const time = rec.time + Math.floor(this.#random() * 2 * this.#options.meanStepMs);
    const userId = this.#pick(this.users);
    const r = this.#random();
    const crowded = rec.engine.openOrderCount > (this.#options.targetOpenOrders ?? 2_000);

    if (r < 0.005) return rec.apply({ type: 'FireTimers' }, time);
    if (r < 0.01) {
      const m = this.#market();
      return rec.apply({ type: 'CancelAllOrdersAfter', userId, market: m.name }, time);
    }
    if (r < 0.015) {
      const coin = this.#pick(Object.keys(STARTING_FUNDS));
      const amount = Math.floor(((STARTING_FUNDS[coin] as number) / 1000) * (0.5 + this.#random()));
      const depositId = `dep-${this.#nextFundsId++}`;
      return rec.apply({ type: 'CreditDeposit', depositId, userId, coin, amount, remark: '' }, time);
    }
    if (r < 0.02) {
      const pending = this.#pendingWithdrawals;
      if (pending.length > 0 && this.#random() < 0.6) return this.#advanceWithdrawal(time);
      const coin = this.#pick(Object.keys(STARTING_FUNDS));
      const chain = rec.engine.funds.coinFunds(coin)?.chains[0] as ChainSpec;
      const amount = Math.floor(((STARTING_FUNDS[coin] as number) / 1_000) * (0.5 + this.#random()));
      const result = rec.apply(
        {
          type: 'RequestWithdrawal',
          userId,
          coin,
          address: externalAddress(coin, userId),
          amount,
          fee: chain.withdrawFee,
          itransfer: false,
        },
        time,
      );
      if (result.withdrawalId !== undefined) pending.push(result.withdrawalId);
      return result;
    }
    if (r < (crowded ? 0.5 : 0.25)) {
      const open = rec.engine.openOrders(userId);
      if (open.length > 0) {
        const o = this.#pick(open);
        // Some cancels go by client order id, which acts on the latest order with it.
        if (o.clientOrderId !== '' && this.#random() < 0.5) {
          return rec.apply(
            { type: 'CancelOrder', userId, market: o.market, orderId: 0, clientOrderId: o.clientOrderId },
            time,
          );
        }
        return rec.apply(
          { type: 'CancelOrder', userId, market: o.market, orderId: o.id, clientOrderId: '' },
          time,
        );
      }
    }

    const m = this.#market();
    const mid = this.#mids.get(m.name) as number;
    // A slow random walk, in steps of ±0.03% of the price.
    const drift = Math.max(1, Math.round(mid * 0.0003));
    const next = Math.max(drift * 10, mid + (this.#random() < 0.5 ? -drift : drift));
    this.#mids.set(m.name, next);
    const side: Side = this.#random() < 0.5 ? BUY : SELL;
    const away = side === BUY ? -1 : 1;
    const spread = Math.max(1, Math.round(next * 0.002));

    if (r < 0.3) {
      // orderMoreV2: a small ladder of limit orders behind the mid.
      const orders = Array.from({ length: this.#int(2, 5) }, (_, i) => ({
        price: next + away * spread * (i + 1),
        amount: this.#int(m.minLots, m.maxLots),
      }));
      return rec.apply({ type: 'PlaceOrderBatch', userId, market: m.name, side, acctType: 0, orders }, time);
    }
    const k = this.#random();
    const kind: OrderKind = k < 0.12 ? 'ioc' : k < 0.2 ? 'postOnly' : 'limit';
    // Limit orders land around the mid, some crossing it; IOC orders cross to take liquidity.
    const offset =
      kind === 'ioc'
        ? -away * this.#int(0, 3) * spread
        : away * Math.round((this.#random() * 4 - 1.3) * spread);
    const price = Math.max(1, next + offset);
    const clientOrderId = this.#random() < 0.2 ? `c${this.#int(1000, 1050)}` : '';
    return rec.apply(
      {
        type: 'PlaceOrder',
        userId,
        market: m.name,
        side,
        kind,
        price,
        amount: this.#int(m.minLots, m.maxLots),
        acctType: 0,
        clientOrderId,
      },
      time,
    );
  }
}

/** The stream's external withdrawal address of a user for a coin (on the coin's first chain). */
function externalAddress(coin: string, userId: number): string {
  return `ext-${coin}-${userId}`;
}
