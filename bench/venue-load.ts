/**
 * @module venue-load — what bench:venue's load is made of, and its setup through the venue's own
 * APIs (the admin API for users, deposits, keys and the lending pool; the signed API for margin
 * transfers; orders for the resting books):
 * - markets (MARKETS): btc_usdt, eth_usdt and zb_usdt, each with a 50-level book a side around
 *   its trade price, so that depth pushes are full size;
 * - streams (planStreams): a seller and a buyer on one market and account kind (spot, isolated,
 *   cross; `express`: auto-borrow, single orders only), each trader its own user, API key and
 *   loopback address (127.0.0.x: as many addresses as traders, so that the per-IP limits apply
 *   to each trader as to a distinct client);
 * - the worker split (splitStreams): streams dealt round robin to the trader processes.
 * The traders' cycles are venue-trader-worker.ts's.
 */
import { admin, createTrader, ZbClient } from '../test/fixtures/zb-client.ts';

/** A market of the load: its trade price, the prices of the orders that rest and are cancelled. */
export interface MarketLoad {
  readonly market: string;
  readonly base: string;
  readonly quote: string;
  /** Where every trade happens. */
  readonly price: string;
  /** A PostOnly sell rests here (inside the spread of the seeded book). */
  readonly priceAbove: string;
  /** A limit buy rests here. */
  readonly priceBelow: string;
  readonly amount: string;
  /** The seeded book: best ask and bid, the step between levels, each level's amount. */
  readonly book: {
    readonly ask: number;
    readonly bid: number;
    readonly step: number;
    readonly scale: number;
  };
  readonly bookAmount: string;
  /** What a seller and a buyer are credited (base, quote), ample for the longest run. */
  readonly sellerBase: string;
  readonly buyerQuote: string;
}

export const MARKETS: readonly MarketLoad[] = [
  {
    market: 'btc_usdt',
    base: 'btc',
    quote: 'usdt',
    price: '30000.00',
    priceAbove: '30010.00',
    priceBelow: '29990.00',
    amount: '0.0100',
    book: { ask: 30_050, bid: 29_950, step: 1, scale: 2 },
    bookAmount: '0.5000',
    sellerBase: '100000',
    buyerQuote: '100000000',
  },
  {
    market: 'eth_usdt',
    base: 'eth',
    quote: 'usdt',
    price: '2000.00',
    priceAbove: '2001.00',
    priceBelow: '1999.00',
    amount: '0.0100',
    book: { ask: 2_005, bid: 1_995, step: 0.1, scale: 2 },
    bookAmount: '5.0000',
    sellerBase: '1000000',
    buyerQuote: '100000000',
  },
  {
    market: 'zb_usdt',
    base: 'zb',
    quote: 'usdt',
    price: '1.0000',
    priceAbove: '1.0010',
    priceBelow: '0.9990',
    amount: '10.00',
    book: { ask: 1.005, bid: 0.995, step: 0.0001, scale: 4 },
    bookAmount: '1000.00',
    sellerBase: '5000000',
    buyerQuote: '100000000',
  },
];

export interface TraderSpec {
  readonly name: string;
  readonly accessKey: string;
  readonly secret: string;
  /** The loopback address its connections come from. */
  readonly address: string;
  /** 0 spot, 1 isolated, 2 cross. */
  readonly acctType: 0 | 1 | 2;
  /** enableExpress=1 on its orders (auto-borrow). */
  readonly express: boolean;
}

export interface StreamSpec {
  readonly market: string;
  readonly price: string;
  readonly priceAbove: string;
  readonly priceBelow: string;
  readonly amount: string;
  readonly batches: boolean;
  readonly batchSize: number;
  readonly seller: TraderSpec;
  readonly buyer: TraderSpec;
}

export interface TraderWorkerConfig {
  readonly base: string;
  readonly streams: readonly StreamSpec[];
}

/** A stream's shape before its traders exist. */
export interface StreamPlan {
  readonly market: MarketLoad;
  readonly acctType: 0 | 1 | 2;
  readonly express: boolean;
}

/**
 * The streams: on btc_usdt 3 spot, 2 isolated, 1 cross, 1 isolated and 1 cross with auto-borrow;
 * on eth_usdt 2 spot, 1 isolated, 1 cross with auto-borrow; on zb_usdt 2 spot (`scale` < 1 keeps
 * one of each kind for a quick run).
 */
export function planStreams(quick: boolean): StreamPlan[] {
  const [btc, eth, zb] = MARKETS as [MarketLoad, MarketLoad, MarketLoad];
  const s = (market: MarketLoad, acctType: 0 | 1 | 2, express = false, n = 1): StreamPlan[] =>
    Array.from({ length: quick ? 1 : n }, () => ({ market, acctType, express }));
  return [
    ...s(btc, 0, false, 3),
    ...s(btc, 1, false, 2),
    ...s(btc, 2),
    ...s(btc, 1, true),
    ...s(btc, 2, true),
    ...s(eth, 0, false, 2),
    ...(quick ? [] : s(eth, 1)),
    ...(quick ? [] : s(eth, 2, true)),
    ...s(zb, 0, false, 2),
  ];
}

interface Venue {
  readonly base: string;
  readonly adminBase: string;
  readonly token: string;
}

async function must(what: string, reply: Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const r = await reply;
  if (String(r['code']) !== '1000') throw new Error(`${what} refused: ${JSON.stringify(r)}`);
  return r;
}

/**
 * Funds the lending pool with every coin the margin streams may borrow, creates each stream's
 * two traders (perms asset, entrust, lever), credits them and moves what margin traders trade
 * with into their margin accounts. An auto-borrow seller's margin account holds quote only, so
 * that its sells borrow the base they sell.
 */
export async function createStreams(venue: Venue, plans: readonly StreamPlan[]): Promise<StreamSpec[]> {
  for (const [coin, amount] of [
    ['btc', '50000'],
    ['eth', '500000'],
    ['usdt', '100000000'],
  ] as const) {
    await must(
      `funding the lending pool with ${coin}`,
      admin(venue.adminBase, venue.token, '/admin/lending/fund', [
        ['coin', coin],
        ['amount', amount],
        ['rate', '0.05'],
        ['days', '10'],
        ['ref', `venue-bench-${coin}`],
      ]),
    );
  }
  const streams: StreamSpec[] = [];
  let n = 0;
  for (const plan of plans) {
    const m = plan.market;
    const make = async (role: 'seller' | 'buyer'): Promise<TraderSpec> => {
      const index = n++;
      const name = `${role}${index}`;
      const seller = role === 'seller';
      const deposits: [string, string][] = seller
        ? [
            [m.base, m.sellerBase],
            [m.quote, '1000000'],
          ]
        : [[m.quote, m.buyerQuote]];
      const client = await createTrader(venue, name, deposits, 'asset,entrust,lever');
      if (plan.acctType !== 0) await moveIntoMargin(client, plan, seller);
      return {
        name,
        accessKey: client.accessKey,
        secret: client.secret,
        // 127.0.0.10 onwards: one address a trader.
        address: `127.0.${Math.floor((index + 10) / 250)}.${((index + 10) % 250) + 2}`,
        acctType: plan.acctType,
        express: plan.express,
      };
    };
    streams.push({
      market: m.market,
      price: m.price,
      priceAbove: m.priceAbove,
      priceBelow: m.priceBelow,
      amount: m.amount,
      batches: !plan.express,
      batchSize: 20,
      seller: await make('seller'),
      buyer: await make('buyer'),
    });
  }
  return streams;
}

/** What a margin trader trades with, from spot into its isolated (this market) or cross account. */
async function moveIntoMargin(client: ZbClient, plan: StreamPlan, seller: boolean): Promise<void> {
  const m = plan.market;
  const moves: [string, string][] = seller
    ? plan.express
      ? [[m.quote, '1000000']]
      : [
          [m.base, m.sellerBase],
          [m.quote, '1000000'],
        ]
    : [[m.quote, m.buyerQuote]];
  for (const [coin, amount] of moves) {
    const isolated = plan.acctType === 1;
    await must(
      `moving ${amount} ${coin} into ${isolated ? 'isolated' : 'cross'} margin`,
      client.call(isolated ? 'transferInLever' : 'transferInCross', [
        ['coin', coin],
        ['amount', amount],
        ...(isolated ? ([['marketName', m.market]] as [string, string][]) : []),
      ]),
    );
  }
}

/**
 * A maker with 50 levels a side on every market of the load, outside the prices it trades at, and
 * one trade at each market's price (so that every market has a last price, which margin accounts
 * are valued at from the first order on).
 */
export async function seedBooks(venue: Venue): Promise<void> {
  const deposits: [string, string][] = [
    ['usdt', '100000000'],
    ...MARKETS.map((m) => [m.base, m.sellerBase] as [string, string]),
  ];
  const maker = await createTrader(venue, 'maker', deposits);
  const primer = await createTrader(venue, 'primer', [['usdt', '1000000']]);
  for (const m of MARKETS) {
    for (const [trader, side] of [
      [maker, '0'],
      [primer, '1'],
    ] as const) {
      await must(
        `the first trade on ${m.market}`,
        trader.call('order', [
          ['currency', m.market],
          ['tradeType', side],
          ['price', m.price],
          ['amount', m.amount],
        ]),
      );
    }
    for (const [side, first, sign] of [
      ['1', m.book.bid, -1],
      ['0', m.book.ask, 1],
    ] as const) {
      for (let batch = 0; batch < 50; batch += 20) {
        const pairs = Array.from({ length: Math.min(20, 50 - batch) }, (_, i) => {
          const price = (first + sign * m.book.step * (batch + i)).toFixed(m.book.scale);
          return `[${price},${m.bookAmount}]`;
        });
        await must(
          `seeding ${m.market}`,
          maker.call('orderMoreV2', [
            ['market', m.market],
            ['tradeParams', `[${pairs.join(',')}]`],
            ['tradeType', side],
          ]),
        );
      }
    }
  }
}

/** `streams` dealt round robin into `workers` groups (none empty while streams last). */
export function splitStreams<T>(streams: readonly T[], workers: number): T[][] {
  const groups: T[][] = Array.from({ length: Math.min(workers, streams.length) }, () => []);
  streams.forEach((s, i) => groups[i % groups.length]?.push(s));
  return groups;
}

/** Loan records (up to 100 each) of the auto-borrow sellers: that their sells did borrow. */
export async function autoBorrowLoans(base: string, streams: readonly StreamSpec[]): Promise<number> {
  let loans = 0;
  for (const s of streams.filter((st) => st.seller.express)) {
    const client = new ZbClient(base, s.seller.accessKey, s.seller.secret);
    const r = await must(
      `the loan records of ${s.seller.name}`,
      client.call('getLoanRecords', [
        ...(s.seller.acctType === 1 ? ([['marketName', s.market]] as [string, string][]) : []),
        ['pageSize', '100'],
      ]),
    );
    loans += Array.isArray(r['result']) ? r['result'].length : 0;
  }
  return loans;
}
