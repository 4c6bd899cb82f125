/**
 * @module test-venue — test support for the public routes: a real Engine on the default venue, a
 * VenuePort whose `submit` applies straight to it with stamped sequence and time, an in-memory
 * SQLite history store fed with every applied command, MarketData wired to the same batches, and
 * in-process requests through light-my-request.
 */
import { inject, type Response } from 'light-my-request';
import { DEFAULT_VENUE } from '../../../config/default-venue.ts';
import { BUY, SELL, type Command, type OrderKind } from '../../../domain/commands.ts';
import { parseDecimal } from '../../../domain/money.ts';
import { Engine, type ApplyResult } from '../../../engine/engine.ts';
import type { HistoryEntry } from '../../../store/history-store.ts';
import { SqliteHistoryStore } from '../../../store/sqlite-history-store.ts';
import { MarketData } from '../../market-data/market-data.ts';
import { createRequestHandler } from '../server.ts';
import { memoryLog } from '../../../observability/memory-log.ts';
import type { VenuePort } from '../types.ts';
import { creditCommand } from '../../../../test/fixtures/engine-driver.ts';
import { publicRoutes } from './public-routes.ts';

/** 2023-11-14T22:13:20Z, a minute boundary + 20 s. */
export const T0 = 1_700_000_000_000;
export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) bourse-test';

export class TestVenue implements VenuePort {
  readonly engine = new Engine(DEFAULT_VENUE);
  readonly history = SqliteHistoryStore.open(':memory:');
  readonly marketData: MarketData;
  readonly handler: ReturnType<typeof createRequestHandler>;
  readonly logs = memoryLog();
  time = T0;
  #seq = 0;
  #pending: HistoryEntry[] = [];
  #deposits = 0;

  constructor(options: { klineMinIntervalMs?: number; seed?: boolean } = {}) {
    this.marketData = new MarketData(this.engine, { now: () => this.time });
    const routes = publicRoutes({
      venue: this,
      marketData: this.marketData,
      ...(options.klineMinIntervalMs === undefined ? {} : { klineMinIntervalMs: options.klineMinIntervalMs }),
    });
    this.handler = createRequestHandler(routes, { log: this.logs.log, now: () => this.time });
  }

  now(): number {
    return this.time;
  }

  /** Applies at once (no journal): what a sequencer does after durability, one command a batch. */
  run(command: Command): ApplyResult {
    const seq = ++this.#seq;
    const result = this.engine.apply({ ...command, seq, time: this.time });
    this.#pending.push({ seq, time: this.time, events: result.events });
    this.marketData.apply([{ result }]);
    return result;
  }

  submit(command: Command): Promise<ApplyResult> {
    return Promise.resolve(this.run(command));
  }

  /** Projects every applied command into the history store. */
  async flush(): Promise<void> {
    const entries = this.#pending;
    this.#pending = [];
    if (entries.length > 0) await this.history.applyBatch(entries);
  }

  /** Registers `name` if new and credits `amount` (decimal text) of `coin`; returns the user id. */
  fund(name: string, coin: string, amount: string): number {
    let userId = this.engine.userId(name);
    if (userId === undefined) {
      const r = this.run({ type: 'RegisterUser', name });
      if (r.userId === undefined) throw new Error(`cannot register ${name}: ${r.result}`);
      userId = r.userId;
    }
    const d = this.run(creditCommand(this.engine, userId, coin, amount, `fund-${++this.#deposits}`));
    if (d.result !== 'OK') throw new Error(`deposit refused: ${d.result}`);
    return userId;
  }

  /** Places a limit (or other kind) order with decimal text price and amount; throws if refused. */
  place(
    userId: number,
    market: string,
    side: 'buy' | 'sell',
    price: string,
    amount: string,
    kind: OrderKind = 'limit',
  ): ApplyResult {
    const spec = this.engine.market(market);
    if (spec === undefined) throw new Error(`no market ${market}`);
    const p = parseDecimal(price, spec.priceScale);
    const a = parseDecimal(amount, spec.amountScale);
    if (p === undefined || a === undefined) throw new Error(`bad price or amount ${price} ${amount}`);
    const r = this.run({
      type: 'PlaceOrder',
      userId,
      market,
      side: side === 'buy' ? BUY : SELL,
      kind,
      price: p,
      amount: a,
      acctType: 0,
      clientOrderId: '',
    });
    if (r.result !== 'OK') throw new Error(`order refused: ${r.result} ${r.message ?? ''}`);
    return r;
  }

  /** A GET through the request handler, in process. */
  get(
    url: string,
    options: { ip?: string; headers?: Record<string, string | undefined> } = {},
  ): Promise<Response> {
    return inject(this.handler, {
      method: 'GET',
      url,
      headers: { 'user-agent': BROWSER_UA, ...options.headers },
      ...(options.ip === undefined ? {} : { remoteAddress: options.ip }),
    });
  }

  async close(): Promise<void> {
    await this.history.close();
  }
}
