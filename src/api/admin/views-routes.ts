/**
 * @module views-routes — the operator's read views (issue 16, "See") and the two actions that go
 * with them: users (list and search, one in full), solvency per coin, markets, the venue's state,
 * rate-limit locks (list and lift), and the audit log. Served under the admin token like every
 * admin route; every list pages with `limit` and `offset`. Amounts are decimal text at the coin's
 * or market's scale; rates are decimal fractions ("0.002" is 0.2 %). A bad parameter, an unknown
 * user, coin or market is refused (3004/3005) with a message naming it, and changes nothing.
 */
import { BUY } from '../../domain/commands.ts';
import { formatBigUnitsTrim, formatUnitsTrim } from '../../domain/money.ts';
import type { CoinSpec, MarketSpec } from '../../domain/specs.ts';
import type { CoinBooks } from '../../engine/books.ts';
import type { Log } from '../../domain/log.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import type { ApiRequest, Route, VenuePort } from '../http/types.ts';
import { param, paramText } from '../http/types.ts';
import type { RateLimitLock } from '../auth/rate-limit.ts';
import { MAX_PAGE_SIZE } from '../../store/history-store.ts';
import { fail, ok } from './admin-reply.ts';
import { plainInteger, readAnyCaseCoin, readInteger, readMarket } from '../edge/readers.ts';
import { quoted, Refusal } from '../edge/refusal.ts';
import type { AuditLog } from './audit-log.ts';
import { engineReader, type UserRecord, type VenueReader } from './venue-reader.ts';

/** Rows a list gives when no `limit` is given. */
export const DEFAULT_LIST_LIMIT = 50;
/** Rows of each section (orders, bills, deposits, withdrawals) of `users/show` by default. */
export const DEFAULT_SECTION_LIMIT = 20;
/** The most rows one call returns (and, for history sections, the deepest `offset + limit`). */
export const MAX_LIST_LIMIT = MAX_PAGE_SIZE;
const MAX_OFFSET = 1_000_000_000;
/** The longest `search` text. */
const MAX_SEARCH_CHARS = 64;

/** The rate-limit locks, through the limiter's own interface (in memory, or in Redis: asynchronous). */
export interface RateLimitLocks {
  locks(): RateLimitLock[] | Promise<RateLimitLock[]>;
  lift(subject: string): RateLimitLock | undefined | Promise<RateLimitLock | undefined>;
}

/** The venue's health as `/ready` reports it, and the latest snapshot. */
export interface VenueProbes {
  ready(): {
    readonly ready: boolean;
    readonly phase: string;
    readonly checks: {
      readonly journal: { readonly ok: boolean; readonly [k: string]: unknown };
      readonly history: { readonly ok: boolean; readonly [k: string]: unknown };
    };
  };
  /** The latest snapshot written (by this run, or found on disk at start), if any. */
  lastSnapshot(): { readonly seq: number; readonly at?: number | undefined } | undefined;
}

export interface ViewsDeps {
  readonly venue: VenuePort;
  /** Default: `engineReader(venue.engine)`. */
  readonly reader?: VenueReader;
  /** What the venue's wallets hold of a coin; undefined where it cannot be told (real chains). */
  readonly walletHoldings?: ((coin: string) => bigint) | undefined;
  /** 24 h base-coin volume of a market as decimal text (the ticker's `vol`). */
  readonly volume24h?: ((market: string) => string | undefined) | undefined;
  readonly probes?: VenueProbes | undefined;
  /** The trade API's limiter; undefined when limits are switched off. */
  readonly limits?: RateLimitLocks | undefined;
  readonly audit?: AuditLog | undefined;
  /** Where a lifted lock is said (the admin component's log). */
  readonly log?: Log | undefined;
}

/** The paths of views-routes that only read (the audit log records the others). */
export const VIEW_READ_PATHS: readonly string[] = [
  '/admin/users/list',
  '/admin/users/show',
  '/admin/solvency',
  '/admin/markets/list',
  '/admin/venue',
  '/admin/limits/list',
  '/admin/audit/list',
];

/** The longest wait for the history store to reach the engine's state before `users/show` reads it (ms). */
const HISTORY_WAIT_MS = 2_000;
const HISTORY_POLL_MS = 10;

/**
 * Waits (at most HISTORY_WAIT_MS) until the history store has applied what the engine had when
 * the request came, so that a view shows the bills of the balances beside them. On timeout the
 * view goes ahead with what the store has (`historySeq` in the answer says how far that is).
 */
export async function awaitHistory(venue: VenuePort): Promise<number> {
  const target = venue.engine.lastSeq;
  const deadline = performance.now() + HISTORY_WAIT_MS;
  let at = await venue.history.checkpoint();
  while (at < target && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, HISTORY_POLL_MS));
    at = await venue.history.checkpoint();
  }
  return at;
}

/** `limit` (1..MAX_LIST_LIMIT) and `offset` (≥ 0) from the request, or the refusal. */
export function paging(request: ApiRequest, defaultLimit: number): { limit: number; offset: number } {
  // An empty `limit=` is refused (not the default): the operator typed something and lost it.
  const limit = readInteger('limit', param(request, 'limit') ?? String(defaultLimit), 1, MAX_LIST_LIMIT);
  const offset = readInteger('offset', param(request, 'offset') ?? '0', 0, MAX_OFFSET);
  return { limit, offset };
}

/** The user named, or numbered, by the `user` parameter (a name first: names may be digits). */
export function userParam(engine: VenueState, reader: VenueReader, request: ApiRequest): UserRecord {
  const text = param(request, 'user') ?? '';
  if (text === '') fail('INVALID_PARAMETER', 'user is required: a name or an id');
  const byName = engine.userId(text);
  const id = byName ?? plainInteger(text);
  const user = id === undefined ? undefined : reader.user(id);
  return user ?? fail('USER_NOT_FOUND', `no user named or numbered ${quoted(text)}`);
}

/** The coin of the `coin` parameter (any case); undefined when absent or empty. */
export function coinParam(engine: VenueState, request: ApiRequest): CoinSpec | undefined {
  const text = paramText(request, 'coin');
  return text === undefined ? undefined : readAnyCaseCoin(engine, 'coin', text);
}

/** Names shown after an unknown market's name, at most. */
const MARKETS_SHOWN = 30;

/**
 * `unknown market 'x': the markets are btc_usdt, eth_usdt, …` (the open and halted ones, in the
 * order they were added), for the operator who mistyped one: what to type instead.
 */
export function unknownMarketMessage(
  name: unknown,
  markets: readonly Pick<MarketSpec, 'name' | 'status'>[],
): string {
  const names = markets.filter((m) => m.status !== 'closed').map((m) => m.name);
  const more = names.length > MARKETS_SHOWN ? ` and ${names.length - MARKETS_SHOWN} more` : '';
  const head = `unknown market ${quoted(String(name))}`;
  return names.length === 0
    ? `${head}: the venue has no market`
    : `${head}: the markets are ${names.slice(0, MARKETS_SHOWN).join(', ')}${more}`;
}

/**
 * The market `name` names, by the signed API's rule (src/api/http/signed/wire.ts: lowercase
 * `<base>_<quote>`, an uppercase name refused with the lowercase one to type, a retired coin name
 * with its replacement); an unknown or misshapen one is refused with the markets there are.
 */
export function knownMarketParam(engine: VenueState, request: ApiRequest, name = 'market'): MarketSpec {
  try {
    return readMarket(engine, name, paramText(request, name));
  } catch (error) {
    // A mistyped name (unknown, or not <base>_<quote>) is answered with the names to type instead.
    const text = param(request, name) ?? '';
    const mistyped =
      error instanceof Refusal &&
      (error.result === 'UNKNOWN_MARKET' ||
        (error.result === 'INVALID_PARAMETER' && text !== '' && text === text.toLowerCase()));
    if (mistyped) fail('UNKNOWN_MARKET', unknownMarketMessage(text, engine.markets()));
    throw error;
  }
}

/** The market of the `market` parameter (knownMarketParam); undefined when absent or empty. */
export function marketParam(engine: VenueState, request: ApiRequest): MarketSpec | undefined {
  return paramText(request, 'market') === undefined ? undefined : knownMarketParam(engine, request);
}

/**
 * One coin's row of `/admin/solvency` as decimal text (docs/operations.md, "Solvency"): the spot
 * columns under their old names (`users…`), the margin accounts, the venue's own accounts, the
 * totals, the loans, bad debt and insurance, the wallet and the differences.
 */
export function solvencyRow(
  b: CoinBooks,
  unitDecimal: number,
  wallet: bigint | undefined,
): Record<string, unknown> {
  const f = (n: bigint): string => formatBigUnitsTrim(n, unitDecimal);
  const marginAvailable = b.isolated.available + b.cross.available;
  const marginFrozen = b.isolated.frozen + b.cross.frozen;
  const users = b.spot.available + b.spot.frozen + marginAvailable + marginFrozen;
  return {
    usersAvailable: f(b.spot.available),
    usersFrozen: f(b.spot.frozen),
    isolatedAvailable: f(b.isolated.available),
    isolatedFrozen: f(b.isolated.frozen),
    crossAvailable: f(b.cross.available),
    crossFrozen: f(b.cross.frozen),
    marginAvailable: f(marginAvailable),
    marginFrozen: f(marginFrozen),
    usersTotal: f(users),
    lendingPoolAvailable: f(b.lendingPool.available),
    lendingPoolFrozen: f(b.lendingPool.frozen),
    insurance: f(b.insurance.available + b.insurance.frozen),
    feeIncome: f(b.feeIncome),
    books: f(b.held),
    deposited: f(b.deposited),
    withdrawn: f(b.withdrawn),
    poolFunded: f(b.poolFunded),
    imbalance: f(b.imbalance),
    loans: {
      pool: { principal: f(b.loansFromPool.principal), interest: f(b.loansFromPool.interest) },
      users: { principal: f(b.loansFromUsers.principal), interest: f(b.loansFromUsers.interest) },
      total: f(
        b.loansFromPool.principal +
          b.loansFromPool.interest +
          b.loansFromUsers.principal +
          b.loansFromUsers.interest,
      ),
    },
    badDebt: f(b.badDebt),
    badDebtPool: { principal: f(b.badDebtPool.principal), interest: f(b.badDebtPool.interest) },
    badDebtUsers: { principal: f(b.badDebtUsers.principal), interest: f(b.badDebtUsers.interest) },
    poolInterest: f(b.poolInterest),
    poolImbalance: f(b.poolImbalance),
    insuranceIn: {
      interestShare: f(b.insuranceInterestShare),
      liquidationFees: f(b.insuranceLiquidationFees),
    },
    insuranceOut: f(b.insuranceCover),
    insuranceImbalance: f(b.insuranceImbalance),
    wallet: wallet === undefined ? null : f(wallet),
    difference: wallet === undefined ? null : f(wallet - b.held),
  };
}

/** Decimals of a rate in ppm read as a fraction (PPM is 10^6). */
const PPM_DECIMALS = 6;

/** A fee rate in ppm as a decimal fraction ("0.002"; a maker rebate is negative). */
const rate = (ppm: number): string => formatUnitsTrim(ppm, PPM_DECIMALS);

export function viewsRoutes(deps: ViewsDeps): Route[] {
  const { venue } = deps;
  const engine = venue.engine;
  const reader = deps.reader ?? engineReader(engine);
  const decimals = (coin: string): number => engine.coin(coin)?.unitDecimal ?? 8;
  const units = (coin: string, n: number): string => formatUnitsTrim(n, decimals(coin));

  const userOf = (request: ApiRequest): UserRecord => userParam(engine, reader, request);
  const coinOf = (request: ApiRequest): CoinSpec | undefined => coinParam(engine, request);
  const marketOf = (request: ApiRequest): MarketSpec | undefined => marketParam(engine, request);

  const userRow = (u: UserRecord): Record<string, unknown> => ({
    id: u.userId,
    name: u.name,
    created: u.created ?? null,
    status: u.status,
    demo: engine.demo.isDemoUser(u.userId),
    keys: engine.apiKeysOf(u.userId).length,
    openOrders: engine.openOrders(u.userId).length,
    // The tree of sub-accounts (issue 33): a sub-account's main user, a main user's sub-accounts.
    mainUser: mainName(u.userId),
    subAccounts: engine.subAccounts
      .subsOf(u.userId)
      .map((s) => engine.userName(s.userId) ?? String(s.userId)),
  });
  const mainName = (userId: number): string | null => {
    const main = engine.subAccounts.mainOf(userId);
    return main === undefined ? null : (engine.userName(main) ?? String(main));
  };

  return [
    {
      /** [search], [limit], [offset]: users by id, those whose name contains `search` (any case) or whose id it is. */
      path: '/admin/users/list',
      handler: (request) => {
        const page = paging(request, DEFAULT_LIST_LIMIT);
        const search = (param(request, 'search') ?? '').toLowerCase();
        if (search.length > MAX_SEARCH_CHARS) {
          fail('INVALID_PARAMETER', `search must be at most ${MAX_SEARCH_CHARS} characters`);
        }
        const all = reader.users();
        const found =
          search === ''
            ? all
            : all.filter((u) => u.name.toLowerCase().includes(search) || String(u.userId) === search);
        return ok({
          total: found.length,
          limit: page.limit,
          offset: page.offset,
          users: found.slice(page.offset, page.offset + page.limit).map(userRow),
        });
      },
    },
    {
      /**
       * user (name or id), [limit] (each section), [offset]: the user in full — balances of every
       * account, open orders, the latest bills, deposits and withdrawals, keys (never secrets).
       */
      path: '/admin/users/show',
      handler: async (request) => {
        const user = userOf(request);
        const page = paging(request, DEFAULT_SECTION_LIMIT);
        if (page.offset + page.limit > MAX_PAGE_SIZE) {
          fail(
            'INVALID_PARAMETER',
            `offset + limit must be at most ${MAX_PAGE_SIZE}: the history sections show the latest rows`,
          );
        }
        const id = user.userId;
        const { offset, limit } = page;
        const recent = { pageIndex: 1, pageSize: offset + limit };
        const historySeq = await awaitHistory(venue);
        const [bills, deposits, withdrawals] = await Promise.all([
          venue.history.bills(id, recent),
          venue.history.deposits(id, recent),
          venue.history.withdrawals(id, recent),
        ]);
        const balances = engine.coins().map((c) => {
          const b = engine.balance(id, c.name) ?? { available: 0, frozen: 0 };
          return { coin: c.name, available: units(c.name, b.available), frozen: units(c.name, b.frozen) };
        });
        // Margin accounts (issue 14): what each holds and owes, per coin it has touched.
        // At the marks, with the notice flag and the liquidation lock (issue 15).
        const margin = engine.margin.accountsOf(id).map((a) => {
          const risk = a.acctType === 1 ? engine.risk.accountRisk(id, a.market) : engine.risk.crossRisk(id);
          const rate = risk?.riskRateBp ?? a.riskRateBp;
          return {
            account: a.acctType === 1 ? `isolated ${a.market}` : 'cross',
            riskRate: rate === undefined ? '-' : formatUnitsTrim(rate, 4),
            ...(risk === undefined ? {} : { level: risk.level, repayLock: risk.repayLock }),
            balances: a.coins.map((c) => ({
              coin: c.coin,
              available: units(c.coin, c.available),
              frozen: units(c.coin, c.frozen),
              borrowed: units(c.coin, c.borrowed),
              interest: units(c.coin, c.interest),
            })),
          };
        });
        const open = engine.openOrders(id);
        return ok({
          user: userRow(user),
          historySeq,
          accounts: [{ account: 'spot', balances }, ...margin],
          openOrders: {
            total: open.length,
            rows: open.slice(offset, offset + limit).map((o) => {
              const m = engine.market(o.market);
              return {
                id: o.id,
                market: o.market,
                side: o.side === BUY ? 'buy' : 'sell',
                kind: o.kind,
                price: m === undefined ? String(o.price) : formatUnitsTrim(o.price, m.priceScale),
                amount: m === undefined ? String(o.amount) : formatUnitsTrim(o.amount, m.amountScale),
                filled: m === undefined ? String(o.filled) : formatUnitsTrim(o.filled, m.amountScale),
                time: o.time,
                clientOrderId: o.clientOrderId,
              };
            }),
          },
          bills: {
            total: bills.total,
            rows: bills.rows.slice(offset).map((b) => ({
              id: b.id,
              time: b.time,
              coin: b.coin,
              type: b.billType,
              change: units(b.coin, b.change),
              balance: units(b.coin, b.balance),
              ref: b.ref,
            })),
          },
          deposits: {
            total: deposits.total,
            rows: deposits.rows.slice(offset).map((d) => ({
              id: d.depositId,
              time: d.time,
              coin: d.coin,
              chain: d.chain,
              amount: units(d.coin, d.amount),
              status: d.status,
              confirmations: d.confirmations,
              txHash: d.txHash,
              note: d.note,
            })),
          },
          withdrawals: {
            total: withdrawals.total,
            rows: withdrawals.rows.slice(offset).map((w) => ({
              id: w.withdrawalId,
              time: w.submitTime,
              coin: w.coin,
              chain: w.chain,
              amount: units(w.coin, w.amount),
              fee: units(w.coin, w.fee),
              address: w.address,
              status: w.status,
              txHash: w.txHash,
            })),
          },
          keys: engine.apiKeysOf(id).map((k) => ({
            accessKey: k.accessKey,
            permissions: (['asset', 'entrust', 'money', 'lever'] as const).filter((p) => k.permissions[p]),
            ips: [...k.ips],
            replayProtection: k.replayProtection === true,
          })),
        });
      },
    },
    {
      /**
       * [coin]: per coin, the books over every kind of account (spot, isolated, cross, the lending
       * pool, the insurance fund, fee income) against what came in and went out, the loans
       * outstanding between them, bad debt and the insurance fund's movements (src/engine/books.ts),
       * and the venue's wallets; the differences shown, never hidden.
       */
      path: '/admin/solvency',
      handler: (request) => {
        const only = coinOf(request);
        const coins = only === undefined ? engine.coins() : [only];
        return ok({
          coins: coins.map((c) => {
            const b = engine.books(c.name) as CoinBooks;
            const wallet = deps.walletHoldings?.(c.name);
            return { coin: c.name, ...solvencyRow(b, c.unitDecimal, wallet) };
          }),
        });
      },
    },
    {
      /** [market], [limit], [offset]: status, fees, best bid and ask, 24 h volume, open orders. */
      path: '/admin/markets/list',
      handler: (request) => {
        const only = marketOf(request);
        const page = paging(request, DEFAULT_LIST_LIMIT);
        const all = only === undefined ? engine.markets() : [only];
        const open = reader.openOrdersByMarket();
        return ok({
          total: all.length,
          limit: page.limit,
          offset: page.offset,
          markets: all.slice(page.offset, page.offset + page.limit).map((m) => {
            const depth = engine.depth(m.name, 1);
            const best = (level: [number, number] | undefined): string | null =>
              level === undefined ? null : formatUnitsTrim(level[0], m.priceScale);
            return {
              market: m.name,
              status: m.status,
              makerFee: rate(m.makerFee),
              takerFee: rate(m.takerFee),
              minAmount: formatUnitsTrim(m.minAmount, m.amountScale),
              minSize: units(m.quote, m.minSize),
              bestBid: best(depth?.bids[0]),
              bestAsk: best(depth?.asks[0]),
              last:
                engine.lastPrice(m.name) === 0
                  ? null
                  : formatUnitsTrim(engine.lastPrice(m.name), m.priceScale),
              volume24h: deps.volume24h?.(m.name) ?? null,
              openOrders: open.get(m.name) ?? 0,
            };
          }),
        });
      },
    },
    {
      /** The journal position, the latest snapshot, the history store's lag, the locks in force. */
      path: '/admin/venue',
      handler: async () => {
        const report = deps.probes?.ready();
        const snapshot = deps.probes?.lastSnapshot();
        const journal = report?.checks.journal;
        const history = report?.checks.history;
        return ok({
          ready: report?.ready ?? null,
          phase: report?.phase ?? null,
          journal: {
            lastSeq: engine.lastSeq,
            durableSeq: typeof journal?.['durableSeq'] === 'number' ? journal['durableSeq'] : null,
            ok: journal?.ok ?? null,
            ...(typeof journal?.['error'] === 'string' ? { error: journal['error'] } : {}),
          },
          snapshot: snapshot === undefined ? null : { seq: snapshot.seq, at: snapshot.at ?? null },
          history: {
            lag: typeof history?.['lag'] === 'number' ? history['lag'] : null,
            maxLag: typeof history?.['maxLag'] === 'number' ? history['maxLag'] : null,
            ok: history?.ok ?? null,
            ...(typeof history?.['error'] === 'string' ? { error: history['error'] } : {}),
          },
          openOrders: engine.openOrderCount,
          rateLimitLocks: deps.limits === undefined ? null : (await deps.limits.locks()).length,
        });
      },
    },
    {
      /** [limit], [offset]: locked IPs and keys at their limit now, soonest lifted first. */
      path: '/admin/limits/list',
      handler: async (request) => {
        const page = paging(request, DEFAULT_LIST_LIMIT);
        if (deps.limits === undefined) return ok({ enabled: false, total: 0, locks: [] });
        const locks = await deps.limits.locks();
        return ok({
          enabled: true,
          total: locks.length,
          limit: page.limit,
          offset: page.offset,
          locks: locks.slice(page.offset, page.offset + page.limit),
        });
      },
    },
    {
      /** subject (an IP or an access key): lifts its lock; refused when none is in force. */
      path: '/admin/limits/lift',
      handler: async (request) => {
        const subject = param(request, 'subject') ?? '';
        if (subject === '' || subject.length > 128) {
          fail('INVALID_PARAMETER', 'subject is required: the IP address or access key locked');
        }
        if (deps.limits === undefined) {
          fail('INVALID_PARAMETER', 'rate limits are switched off on this venue: nothing is locked');
        }
        const lifted = await deps.limits.lift(subject);
        if (lifted === undefined) {
          fail('UNKNOWN_REFERENCE', `no rate-limit lock on ${quoted(subject)} (bourse limits lists them)`);
        }
        deps.log?.info(
          { kind: lifted.kind, subject: lifted.subject, until: new Date(lifted.until).toISOString() },
          `rate limit: the operator lifted the lock on ${lifted.kind === 'ip' ? 'IP' : 'key'} ${lifted.subject}`,
        );
        return ok({ lifted });
      },
    },
    {
      /** [limit], [offset]: admin actions, newest first. */
      path: '/admin/audit/list',
      handler: (request) => {
        const page = paging(request, DEFAULT_LIST_LIMIT);
        if (deps.audit === undefined) fail('GENERAL_ERROR', 'this venue keeps no audit log');
        const { total, entries } = deps.audit.list(page.limit, page.offset);
        return ok({
          total,
          limit: page.limit,
          offset: page.offset,
          // An action cut short has no result: null, not a missing field.
          entries: entries.map((e) => ({
            ...e,
            code: e.code ?? null,
            seqAfter: e.seqAfter ?? null,
            ms: e.ms ?? null,
          })),
        });
      },
    },
  ];
}
