/**
 * @module test-gateway — test support for the WebSocket gateway: a real Engine on the default
 * venue with MarketData, LiveKlines, an in-memory SQLite history store and the gateway, all fed
 * each applied command as a batch (what the sequencer does after durability, without the
 * journal), the gateway attached to a real HTTP server on a TCP port or a Unix socket.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { Command, KeyPermissions } from '../../domain/commands.ts';
import type { VenueConfig } from '../../domain/specs.ts';
import { parseDecimal } from '../../domain/money.ts';
import { Engine, type ApplyResult } from '../../engine/engine.ts';
import { SqliteHistoryStore } from '../../store/sqlite-history-store.ts';
import { Authenticator } from '../auth/authenticate.ts';
import { createSecretSealer, generateApiCredentials } from '../auth/secret-sealing.ts';
import { LiveKlines } from '../market-data/live-klines.ts';
import { MarketData } from '../market-data/market-data.ts';
import { creditCommand } from '../../../test/fixtures/engine-driver.ts';
import { WsGateway, type WsGatewayOptions } from './ws-server.ts';
import { memoryLog } from '../../observability/memory-log.ts';

/** 2023-11-14T22:13:20Z. */
export const T0 = 1_700_000_000_000;
export const ALL_PERMISSIONS: KeyPermissions = { asset: true, entrust: true, money: true, lever: true };

export interface Credentials {
  readonly accessKey: string;
  readonly secret: string;
}

export class WsHarness {
  readonly engine: Engine;
  readonly history = SqliteHistoryStore.open(':memory:');
  readonly marketData: MarketData;
  readonly klines = new LiveKlines();
  readonly sealer = createSecretSealer(randomBytes(32));
  readonly gateway: WsGateway;
  /** What the gateway logged, every level. */
  readonly logs = memoryLog();
  readonly server: Server = createServer((_, res) => res.writeHead(404).end());
  /** The venue's wall clock (ms); tests move it. */
  time = T0;
  #seq = 0;
  #deposits = 0;

  /** `config`: the venue (the default one unless a test needs another, e.g. its mark rule). */
  constructor(options: WsGatewayOptions = {}, config: VenueConfig = DEFAULT_VENUE) {
    this.engine = new Engine(config);
    this.marketData = new MarketData(this.engine, { now: () => this.time });
    const venue = {
      engine: this.engine,
      history: this.history,
      now: () => this.time,
      submit: (command: Command) => Promise.resolve(this.run(command)),
    };
    this.gateway = new WsGateway(
      {
        engine: this.engine,
        marketData: this.marketData,
        klines: this.klines,
        authenticator: new Authenticator(venue, this.sealer),
        now: () => this.time,
        log: this.logs.log,
      },
      { minFlushIntervalMs: 0, ...options },
    );
    this.gateway.attach(this.server);
  }

  /** Listens on a free TCP port, or on the Unix socket `path`; resolves with the base ws URL. */
  listen(path?: string): Promise<string> {
    return new Promise((resolve) => {
      if (path !== undefined) {
        this.server.listen(path, () => resolve(`ws+unix://${path}:`));
        return;
      }
      this.server.listen(0, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(`ws://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`);
      });
    });
  }

  /** Applies one command as one batch, stamped with the next seq and the clock. */
  run(command: Command): ApplyResult {
    const seq = ++this.#seq;
    const result = this.engine.apply({ ...command, seq, time: this.time } as never);
    const batch = [{ result }];
    this.marketData.apply(batch);
    this.klines.apply(batch);
    this.gateway.apply(batch);
    return result;
  }

  must(command: Command): ApplyResult {
    const r = this.run(command);
    if (r.result !== 'OK') throw new Error(`${command.type} refused: ${r.result} ${r.message ?? ''}`);
    return r;
  }

  /** Registers `name` and credits each `[coin, amount]`. */
  user(name: string, deposits: readonly (readonly [string, string])[] = []): number {
    const userId = this.must({ type: 'RegisterUser', name }).userId as number;
    for (const [coin, amount] of deposits) {
      this.must(creditCommand(this.engine, userId, coin, amount, `d${++this.#deposits}`));
    }
    return userId;
  }

  /** An API key for `userId`, sealed as production does. */
  key(
    userId: number,
    permissions: KeyPermissions = ALL_PERMISSIONS,
    ips: string[] = [],
    options: { readonly replayProtection?: boolean } = {},
  ): Credentials {
    const c = generateApiCredentials();
    this.must({
      type: 'CreateApiKey',
      userId,
      accessKey: c.accessKey,
      sealedSecret: this.sealer.seal(c.secretHash, c.accessKey),
      permissions,
      ips,
      ...options,
    });
    return { accessKey: c.accessKey, secret: c.secret };
  }

  /** A limit order on btc_usdt (or `market`) at decimal price and amount. */
  order(userId: number, side: 0 | 1, price: string, amount: string, market = 'btc_usdt'): ApplyResult {
    const spec = this.engine.market(market);
    if (spec === undefined) throw new Error(`no market ${market}`);
    return this.must({
      type: 'PlaceOrder',
      userId,
      market,
      side,
      kind: 'limit',
      price: parseDecimal(price, spec.priceScale) as number,
      amount: parseDecimal(amount, spec.amountScale) as number,
      acctType: 0,
      clientOrderId: '',
    });
  }

  async close(): Promise<void> {
    await this.gateway.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.history.close();
  }
}

/** Waits until the gateway's next flush has run (one turn of setImmediate after the current). */
export function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}
