/**
 * @module demo-market — the live demo venue `npm start` opens on a fresh loopback data directory:
 * market makers quoting every default market around a moving reference price, and a few takers,
 * all ordinary users trading through the signed HTTP API on the server's own port (journaled like
 * everyone else), marked as demo users, with a faucet for test money. docs/sandbox.md describes
 * it.
 *
 * The composition root decides whether it runs (`decideDemo`), starts it once the API listens
 * (`startDemoMarket`), and stops it on `bourse demo stop` (StopDemo) or at shutdown.
 */
import type { Command, FaucetAllowance, KeyPermissions } from '../domain/commands.ts';
import { parseDecimal } from '../domain/money.ts';
import { seededRandom } from '../domain/random.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import { Maker, Taker, type BotContext, type BotMarket } from './bots.ts';
import { DemoClient, RequestBudget } from './demo-client.ts';
import { PricePath, START_PRICES_USD, startingPrices } from './price-path.ts';
import type { TraderKeyStore } from './trader-key.ts';

export { traderKeyFile } from './trader-key.ts';

/** The names of the demo's users: one maker per market, a few takers, and the human's account. */
export const DEMO_TRADER = 'demo-trader';
const MAKER_PREFIX = 'demo-maker-';
const TAKER_PREFIX = 'demo-taker-';
export const DEMO_TAKERS = 3;

/** Requests per second all bots together may send (the per-IP limit on loopback is ~166/s). */
const BOT_REQUESTS_PER_SECOND = 60;
/** A maker's round, and a taker's mean pause between orders (ms); each is jittered by ±50%. */
const MAKER_INTERVAL_MS = 1_000;
const TAKER_INTERVAL_MS = 1_500;
/** How often the reference prices move (ms). */
const PRICE_STEP_MS = 250;

/** Dollar value of what each demo user starts with, per coin; and of the faucet's hourly allowance. */
const MAKER_FUNDS_USD = 600_000;
const TAKER_FUNDS_USD = 100_000;
const TRADER_FUNDS_USD = 50_000;
const FAUCET_USD_PER_HOUR = 10_000;
/** What a bot short of a coin asks the faucet for: a tenth of the hour's allowance. */
const TOP_UP_SHARE = 10;

export const DEMO_PERMISSIONS: KeyPermissions = { asset: true, entrust: true, money: true, lever: true };

/** What the demo needs of the venue: reads, the sequencer, key material, and where the API listens. */
export interface DemoVenue {
  readonly engine: VenueState;
  submit(command: Command): Promise<ApplyResult>;
  /** New key material: the secret (for the bot or the human) and its sealed hash (for the journal). */
  issueKey(): { accessKey: string; secretKey: string; sealedSecret: string };
  /** Where the human's key is kept across restarts (none: a new key at each start). */
  readonly traderKey?: TraderKeyStore;
  /** `http://127.0.0.1:<port>`: the bots' requests go there. */
  readonly baseUrl: string;
  readonly log: (message: string) => void;
}

export type DemoDecision = { readonly run: true } | { readonly run: false; readonly reason: string };

/**
 * Whether the demo runs: `asked` by the operator's settings (src/config/options.ts, `demoAsked`),
 * and on a data directory that is fresh or whose demo is running (started, not stopped).
 */
export function decideDemo(engine: VenueState, asked: DemoDecision): DemoDecision {
  if (!asked.run) return asked;
  const demo = engine.demo;
  if (demo.stopped) return { run: false, reason: 'the demo was stopped for good (bourse demo stop)' };
  if (!demo.started && engine.lastSeq > 0)
    return { run: false, reason: 'no demo: this data directory has history without it' };
  return { run: true };
}

export interface DemoMarket {
  /** The human's demo account and its API key (the same at each start when kept; the secret is shown only at start-up). */
  readonly trader: {
    readonly name: string;
    readonly accessKey: string;
    readonly secretKey: string;
    /** Whether it is the key of the last start, kept (traderKey). */
    readonly kept: boolean;
  };
  /** The bots' names. */
  readonly bots: readonly string[];
  /** Stops every bot and waits for their requests in flight. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Sets the demo up through journaled commands (on a fresh venue: StartDemo with the faucet, then
 * each user registered, marked as a demo user and funded once; on every start: fresh API keys for
 * the bots, the old ones deleted, and the trader's kept key used again when it still opens), then
 * starts the bots. Throws if the venue refuses a step.
 */
export async function startDemoMarket(venue: DemoVenue, seed = Date.now()): Promise<DemoMarket> {
  const { engine } = venue;
  const markets = botMarkets(engine);
  const prices = startingPrices(new Map(markets.map((m) => [m.name, lastPrice(engine, m)])));
  const must = async (command: Command): Promise<ApplyResult> => {
    const r = await venue.submit(command);
    if (r.result !== 'OK')
      throw new Error(`demo set-up: ${command.type} refused: ${r.result} ${r.message ?? ''}`);
    return r;
  };

  if (!engine.demo.started) await must({ type: 'StartDemo', faucet: allowances(engine, prices) });
  // Named by market, so that a restart gives each maker the market (and the coins) it had.
  const makers = markets.map((m) => ({ name: `${MAKER_PREFIX}${m.name}`, market: m }));
  const takers = Array.from({ length: DEMO_TAKERS }, (_, i) => `${TAKER_PREFIX}${i + 1}`);
  const funds = (name: string): [string, number][] => {
    if (name === DEMO_TRADER) return coinsWorth(engine, prices, TRADER_FUNDS_USD);
    const maker = makers.find((m) => m.name === name);
    if (maker === undefined) return coinsWorth(engine, prices, TAKER_FUNDS_USD);
    return coinsWorth(engine, prices, MAKER_FUNDS_USD, [maker.market.base, maker.market.quote]);
  };
  const keys = new Map<string, { accessKey: string; secretKey: string }>();
  let kept = false;
  for (const name of [DEMO_TRADER, ...makers.map((m) => m.name), ...takers]) {
    let userId = engine.userId(name);
    if (userId === undefined)
      userId = (await must({ type: 'RegisterUser', name, uniqueIgnoringCase: true })).userId as number;
    if (!engine.demo.isDemoUser(userId)) await must({ type: 'MarkDemoUser', userId });
    for (const [coin, amount] of funds(name)) {
      const depositId = `demo:${name}:${coin}`;
      if (engine.funds.deposit(depositId) !== undefined) continue;
      await must({ type: 'CreditDeposit', depositId, userId, coin, amount, remark: 'demo funds' });
    }
    const same = name === DEMO_TRADER ? venue.traderKey?.kept(engine.apiKeysOf(userId)) : undefined;
    for (const old of engine.apiKeysOf(userId))
      if (old.accessKey !== same?.accessKey) await must({ type: 'DeleteApiKey', accessKey: old.accessKey });
    if (same !== undefined) {
      keys.set(name, same);
      kept = true;
      continue;
    }
    const key = venue.issueKey();
    await must({
      type: 'CreateApiKey',
      userId,
      accessKey: key.accessKey,
      sealedSecret: key.sealedSecret,
      permissions: DEMO_PERMISSIONS,
      ips: [],
    });
    keys.set(name, key);
    if (name === DEMO_TRADER) venue.traderKey?.save(key);
  }

  const path = new PricePath(prices, seed);
  // The bots' own choices and pauses: a second seeded stream, apart from the price path's.
  const random = seededRandom(seed ^ 0x9e3779b9);
  const ctx: BotContext = {
    path,
    random,
    topUp: new Map(
      engine.demo
        .faucet()
        .map((a) => [a.coin, unitsText(engine, a.coin, Math.floor(a.perHour / TOP_UP_SHARE))]),
    ),
    log: venue.log,
  };
  const budget = new RequestBudget(BOT_REQUESTS_PER_SECOND);
  const client = (name: string): DemoClient => {
    const key = keys.get(name) as { accessKey: string; secretKey: string };
    return new DemoClient(venue.baseUrl, key.accessKey, key.secretKey, budget);
  };
  const runner = new BotRunner(random);
  let steppedAt = performance.now();
  runner.every(PRICE_STEP_MS, async () => {
    const now = performance.now();
    path.step(now - steppedAt);
    steppedAt = now;
  });
  for (const m of makers) {
    const maker = new Maker(m.name, client(m.name), m.market, ctx);
    runner.every(MAKER_INTERVAL_MS, () => maker.tick(), true);
  }
  for (const name of takers) {
    const taker = new Taker(name, client(name), markets, ctx);
    runner.every(TAKER_INTERVAL_MS, () => taker.tick(), true);
  }
  const trader = keys.get(DEMO_TRADER) as { accessKey: string; secretKey: string };
  venue.log(
    `demo market: ${makers.length} makers (one per market) and ${takers.length} takers trading through ${venue.baseUrl}`,
  );
  return {
    trader: { name: DEMO_TRADER, accessKey: trader.accessKey, secretKey: trader.secretKey, kept },
    bots: [...makers.map((m) => m.name), ...takers],
    stop: () => runner.stop(),
  };
}

/** The markets the bots trade: every trading market whose two coins have a reference price. */
function botMarkets(engine: VenueState): BotMarket[] {
  return engine
    .markets()
    .filter((m) => m.status === 'trading' && m.base in START_PRICES_USD && m.quote in START_PRICES_USD)
    .map((m) => {
      const quoteDecimals = engine.coin(m.quote)?.unitDecimal ?? 8;
      return {
        name: m.name,
        base: m.base,
        quote: m.quote,
        priceScale: m.priceScale,
        amountScale: m.amountScale,
        minAmount: m.minAmount / 10 ** m.amountScale,
        minSize: m.minSize / 10 ** quoteDecimals,
      };
    });
}

/** The market's last trade price as a number (0 before any trade). */
function lastPrice(engine: VenueState, m: BotMarket): number {
  return engine.lastPrice(m.name) / 10 ** m.priceScale;
}

/** The faucet: about FAUCET_USD_PER_HOUR of every coin with a reference price, per hour. */
function allowances(engine: VenueState, prices: Readonly<Record<string, number>>): FaucetAllowance[] {
  return coinsWorth(engine, prices, FAUCET_USD_PER_HOUR).map(([coin, perHour]) => ({ coin, perHour }));
}

/** About `usd` dollars of each coin (of `only`, or of every priced coin), in coin units, as round numbers. */
function coinsWorth(
  engine: VenueState,
  prices: Readonly<Record<string, number>>,
  usd: number,
  only?: readonly string[],
): [string, number][] {
  const out: [string, number][] = [];
  for (const coin of engine.coins()) {
    const price = prices[coin.name];
    if (price === undefined || (only !== undefined && !only.includes(coin.name))) continue;
    const amount = usd / price;
    const text = amount >= 100 ? String(Math.round(amount)) : amount.toFixed(Math.min(4, coin.unitDecimal));
    const units = parseDecimal(text, coin.unitDecimal);
    if (units !== undefined && units > 0) out.push([coin.name, units]);
  }
  return out;
}

/** Coin units as decimal text. */
function unitsText(engine: VenueState, coin: string, units: number): string {
  const decimals = engine.coin(coin)?.unitDecimal ?? 0;
  return (units / 10 ** decimals).toFixed(decimals);
}

/** Runs the bots' loops: each task again and again, one call at a time, until stopped. */
class BotRunner {
  readonly #random: () => number;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();
  #stopped = false;

  constructor(random: () => number) {
    this.#random = random;
  }

  /** Calls `task` every `ms` (±50% when `jitter`), never two calls of it at once. */
  every(ms: number, task: () => Promise<void>, jitter = false): void {
    const schedule = (): void => {
      if (this.#stopped) return;
      const delay = jitter ? ms * (0.5 + this.#random()) : ms;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        const run = task()
          .catch(() => undefined)
          .finally(() => {
            this.#running.delete(run);
            schedule();
          });
        this.#running.add(run);
      }, delay);
      this.#timers.add(timer);
    };
    schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#running);
  }
}
