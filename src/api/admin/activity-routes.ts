/**
 * @module activity-routes — the venue-wide lists of the operator (issue 31): deposits, withdrawals
 * and trades of every user, newest first, paged, with filters (user, coin or market, status, a
 * time range). Deposits and withdrawals come from the engine's funds records (every one the venue
 * has had); trades from the history store, every one it holds (src/store/venue-trades.ts: index
 * searches bounded by the page, the total counted up to VENUE_TRADES_COUNT_CAP).
 */
import { BUY } from '../../domain/commands.ts';
import { WITHDRAWAL_STATES, type DepositState } from '../../domain/chains.ts';
import { formatUnitsTrim } from '../../domain/money.ts';
import type { MarketSpec } from '../../domain/specs.ts';
import { VENUE_TRADES_COUNT_CAP } from '../../store/history-store.ts';
import { choice, integer, readChoice, withDefault } from '../edge/readers.ts';
import { paramText, type ApiRequest, type Route, type VenuePort } from '../http/types.ts';
import { fail, ok } from './admin-reply.ts';
import { engineReader } from './venue-reader.ts';
import { coinParam, DEFAULT_LIST_LIMIT, marketParam, paging, userParam } from './views-routes.ts';

/** The paths of activity-routes (all read). */
export const ACTIVITY_READ_PATHS: readonly string[] = ['/admin/deposits/list', '/admin/trades/list'];

const DEPOSIT_STATES: readonly DepositState[] = ['confirming', 'credited', 'failed'];
/** The latest time a range may name (ms): year 2255, far past any clock. */
const MAX_TIME_MS = 9_000_000_000_000;
const FROM = withDefault(integer(0, MAX_TIME_MS), 0);
const TO = withDefault(integer(0, MAX_TIME_MS), MAX_TIME_MS);
const ORDER = withDefault(choice(['oldest', 'newest']), 'oldest');

/** The filters every list takes: a user (name or id), a time range [from, to] in ms. */
function common(venue: VenuePort, request: ApiRequest): { userId?: number; from: number; to: number } {
  const user =
    paramText(request, 'user') === undefined
      ? undefined
      : userParam(venue.engine, engineReader(venue.engine), request);
  const from = FROM.read(venue.engine, 'from', paramText(request, 'from'));
  const to = TO.read(venue.engine, 'to', paramText(request, 'to'));
  if (from > to) fail('INVALID_PARAMETER', `from (${from}) must not be after to (${to})`);
  return { ...(user !== undefined && { userId: user.userId }), from, to };
}

/** `rows` newest first, paged as the request asks. */
function page<T>(
  request: ApiRequest,
  rows: readonly T[],
): { total: number; limit: number; offset: number; rows: T[] } {
  const { limit, offset } = paging(request, DEFAULT_LIST_LIMIT);
  return { total: rows.length, limit, offset, rows: rows.slice(offset, offset + limit) };
}

export function activityRoutes(deps: { readonly venue: VenuePort }): Route[] {
  const { venue } = deps;
  const engine = venue.engine;
  const units = (coin: string, n: number): string => formatUnitsTrim(n, engine.coin(coin)?.unitDecimal ?? 8);
  const name = (userId: number): string => engine.userName(userId) ?? `#${userId}`;

  return [
    {
      /** [user], [coin], [status] (confirming, credited, failed), [from], [to], [limit], [offset]. */
      path: '/admin/deposits/list',
      handler: (request) => {
        const { userId, from, to } = common(venue, request);
        const coin = coinParam(engine, request);
        const status =
          paramText(request, 'status') === undefined
            ? undefined
            : readChoice('status', paramText(request, 'status'), DEPOSIT_STATES);
        const found = engine.funds
          .deposits()
          .filter(
            (d) =>
              (userId === undefined || d.userId === userId) &&
              (coin === undefined || d.coin === coin.name) &&
              (status === undefined || d.state === status) &&
              d.time >= from &&
              d.time <= to,
          )
          .reverse();
        const { rows, ...rest } = page(request, found);
        return ok({
          ...rest,
          deposits: rows.map((d) => ({
            id: d.depositId,
            time: d.time,
            user: name(d.userId),
            userId: d.userId,
            coin: d.coin,
            chain: d.chain,
            amount: units(d.coin, d.amount),
            status: d.state,
            confirmations: d.confirmations,
            txHash: d.txHash,
            address: d.address,
            note: d.note,
          })),
        });
      },
    },
    {
      /**
       * [market], [user] (taker or maker), [from], [to], [limit], [offset]: every trade the history
       * store holds, newest first; `total` counted up to VENUE_TRADES_COUNT_CAP (`capped` beyond).
       */
      path: '/admin/trades/list',
      handler: async (request) => {
        const { userId, from, to } = common(venue, request);
        const only = marketParam(engine, request);
        const { limit, offset } = paging(request, DEFAULT_LIST_LIMIT);
        if (offset + limit > VENUE_TRADES_COUNT_CAP) {
          fail(
            'INVALID_PARAMETER',
            `offset + limit (${offset + limit}) must be at most ${VENUE_TRADES_COUNT_CAP}: narrow the list with market, user, from or to`,
          );
        }
        const found = await venue.history.venueTrades({
          market: only?.name,
          userId,
          fromTime: from,
          toTime: to,
          limit,
          offset,
        });
        return ok({
          total: found.total,
          capped: found.capped,
          limit,
          offset,
          trades: found.rows.map((t) => {
            const m = engine.market(t.market) as MarketSpec;
            return {
              id: t.id,
              time: t.time,
              market: t.market,
              price: formatUnitsTrim(t.price, m.priceScale),
              amount: formatUnitsTrim(t.amount, m.amountScale),
              value: units(m.quote, t.value),
              takerSide: t.takerSide === BUY ? 'buy' : 'sell',
              taker: name(t.takerUserId),
              maker: name(t.makerUserId),
            };
          }),
        });
      },
    },
  ];
}

/**
 * The withdrawals `/admin/withdrawals/list` answers: every one (or with pending=1 those in
 * progress), filtered by [user], [coin], [status], [from], [to]; oldest first, or with
 * order=newest newest first, paged by [limit] and [offset] when given.
 */
export function withdrawalsFilter(venue: VenuePort, request: ApiRequest) {
  const { userId, from, to } = common(venue, request);
  const coin = coinParam(venue.engine, request);
  const status =
    paramText(request, 'status') === undefined
      ? undefined
      : readChoice('status', paramText(request, 'status'), WITHDRAWAL_STATES);
  const order = ORDER.read(venue.engine, 'order', paramText(request, 'order'));
  const paged = paramText(request, 'limit') !== undefined || paramText(request, 'offset') !== undefined;
  return {
    keep: (w: { userId: number; coin: string; state: string; submitTime: number }): boolean =>
      (userId === undefined || w.userId === userId) &&
      (coin === undefined || w.coin === coin.name) &&
      (status === undefined || w.state === status) &&
      w.submitTime >= from &&
      w.submitTime <= to,
    arrange: <T>(rows: T[]): { rows: T[]; total: number; limit?: number; offset?: number } => {
      const ordered = order === 'newest' ? rows.reverse() : rows;
      if (!paged) return { rows: ordered, total: ordered.length };
      const { rows: shown, ...rest } = page(request, ordered);
      return { rows: shown, ...rest };
    },
  };
}
