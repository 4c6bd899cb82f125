/**
 * @module venue-trades — the operator's venue-wide list of trades (issue 31): every trade the
 * history store holds, newest first, filtered by market, by user (taker or maker) and by a time
 * range, paged. Shared by the SQLite and PostgreSQL stores: the SQL (written once, in SQLite's
 * dialect; the PostgreSQL store converts it) and the one way to run it.
 *
 * Every read is an index range search bounded by the page, whatever the history's size:
 * - the time range becomes an id range first: trade ids grow with the sequence, and the
 *   sequencer's time never goes back (docs/durability.md), so the trades of [from, to] are those of
 *   one id range, found by a binary search of point lookups (about 2 × log2 of the ids);
 * - a user's trades come from two indexes, (taker_user_id, id) and (maker_user_id, id), merged;
 * - the total is counted exactly up to VENUE_TRADES_COUNT_CAP matches (the count then walks at
 *   most that many index entries), beyond which the list says "more than" the cap; a page may not
 *   start past the cap either.
 */
import { TRADE_COLUMNS, num, tradeRow, type Row } from './history-rows.ts';
import {
  MAX_VENUE_TRADES_LIMIT,
  VENUE_TRADES_COUNT_CAP,
  type VenueTrades,
  type VenueTradesQuery,
} from './history-store.ts';

/** The filters' shapes, each with its own statements (so that each has its index). */
type Shape = 'all' | 'market' | 'user' | 'userMarket';

/** The WHERE clause of each shape's arms, with named parameters (numbered per statement below). */
const ARMS: Record<Shape, readonly string[]> = {
  all: ['id BETWEEN :lo AND :hi'],
  market: ['market = :market AND id BETWEEN :lo AND :hi'],
  user: [
    'taker_user_id = :user AND id BETWEEN :lo AND :hi',
    'maker_user_id = :user AND taker_user_id <> :user AND id BETWEEN :lo AND :hi',
  ],
  userMarket: [
    'taker_user_id = :user AND market = :market AND id BETWEEN :lo AND :hi',
    'maker_user_id = :user AND taker_user_id <> :user AND market = :market AND id BETWEEN :lo AND :hi',
  ],
};

/** The order of a shape's parameters: every statement binds these, then its own (limit, offset or cap). */
const SHAPE_PARAMS: Record<Shape, readonly string[]> = {
  all: ['lo', 'hi'],
  market: ['lo', 'hi', 'market'],
  user: ['lo', 'hi', 'user'],
  userMarket: ['lo', 'hi', 'user', 'market'],
};

/** `sql` with its named parameters numbered (?1, ?2, …) in the order of `names`. */
function numbered(sql: string, names: readonly string[]): string {
  return sql.replace(/:(\w+)/g, (_, name: string) => {
    const at = names.indexOf(name);
    if (at < 0) throw new Error(`no parameter ${name} in ${names.join(', ')}`);
    return `?${at + 1}`;
  });
}

/** The statements of a shape: its page (limit, offset), the cap probe (cap) and the count. */
function shapeSql(shape: Shape, pg: boolean): { rows: string; beyond: string; count: string } {
  const arms = ARMS[shape];
  const names = SHAPE_PARAMS[shape];
  const union = (columns: string, perArm = ''): string =>
    arms
      .map((where) =>
        perArm === ''
          ? `SELECT ${columns} FROM trades WHERE ${where}`
          : `(SELECT ${columns} FROM trades WHERE ${where} ${perArm})`,
      )
      .join(' UNION ALL ');
  // PostgreSQL would sort every match of a union: there each arm is read backwards for at most
  // limit + offset rows, then merged (cf. pgOrderListSql). SQLite merges the arms in index order.
  const rows =
    pg && arms.length > 1
      ? `SELECT * FROM (${union(TRADE_COLUMNS, 'ORDER BY id DESC LIMIT CAST(:limit AS bigint) + CAST(:offset AS bigint)')}) AS t ` +
        'ORDER BY id DESC LIMIT :limit OFFSET :offset'
      : `${union(TRADE_COLUMNS)} ORDER BY id DESC LIMIT :limit OFFSET :offset`;
  return {
    rows: numbered(rows, [...names, 'limit', 'offset']),
    beyond: numbered(
      pg && arms.length > 1
        ? `SELECT id FROM (${union('id', 'ORDER BY id DESC LIMIT CAST(:cap AS bigint) + 1')}) AS t ` +
            'ORDER BY id DESC LIMIT 1 OFFSET :cap'
        : `${union('id')} ORDER BY id DESC LIMIT 1 OFFSET :cap`,
      [...names, 'cap'],
    ),
    count: numbered(
      arms.length === 1
        ? `SELECT count(*) AS n FROM trades WHERE ${arms[0] as string}`
        : `SELECT ${arms.map((where) => `(SELECT count(*) FROM trades WHERE ${where})`).join(' + ')} AS n`,
      names,
    ),
  };
}

const SHAPES: readonly Shape[] = ['all', 'market', 'user', 'userMarket'];

type Statement =
  'tradeAtOrAfter' | 'tradeLast' | `${'venueTrades' | 'venueTradesBeyond' | 'venueTradesCount'}:${Shape}`;

function statements(pg: boolean): Record<Statement, string> {
  return {
    // The first trade at or after an id: the probe of the time → id binary search.
    tradeAtOrAfter: 'SELECT id, time FROM trades WHERE id >= ?1 ORDER BY id LIMIT 1',
    tradeLast: 'SELECT id FROM trades WHERE id <= ?1 ORDER BY id DESC LIMIT 1',
    ...(Object.fromEntries(
      SHAPES.flatMap((shape) => {
        const sql = shapeSql(shape, pg);
        return [
          [`venueTrades:${shape}`, sql.rows],
          [`venueTradesBeyond:${shape}`, sql.beyond],
          [`venueTradesCount:${shape}`, sql.count],
        ];
      }),
    ) as Record<`${'venueTrades' | 'venueTradesBeyond' | 'venueTradesCount'}:${Shape}`, string>),
  };
}

/** The SQL of every venue-trades statement, by name, in SQLite's dialect (QUERY_SQL includes them). */
export const VENUE_TRADES_SQL: Readonly<Record<Statement, string>> = statements(false);
/** The same for PostgreSQL, its parameters still `?n` (postgresSql converts them). */
export const PG_VENUE_TRADES_SQL: Readonly<Record<Statement, string>> = statements(true);

export type VenueTradesStatement = Statement;

/** Runs one statement with its parameters; rows as arrays. */
export type RunStatement = (
  name: VenueTradesStatement,
  params: readonly (number | string)[],
) => Promise<Row[]>;

/** The lowest trade id whose time is at least `time` (one past the last trade when none is). */
async function firstIdFrom(run: RunStatement, time: number): Promise<number> {
  const last = num((await run('tradeLast', [Number.MAX_SAFE_INTEGER]))[0]?.[0] ?? 0);
  let lo = 0;
  let hi = last + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const found = (await run('tradeAtOrAfter', [mid]))[0];
    if (found === undefined || num(found[1]) >= time) hi = mid;
    else lo = num(found[0]) + 1;
  }
  return lo;
}

/** The venue's trades as `query` asks (see the module comment); bad bounds are a RangeError. */
export async function venueTrades(run: RunStatement, query: VenueTradesQuery): Promise<VenueTrades> {
  const { limit, offset } = query;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_VENUE_TRADES_LIMIT)
    throw new RangeError(`limit must be an integer 1..${MAX_VENUE_TRADES_LIMIT}`);
  if (!Number.isSafeInteger(offset) || offset < 0 || offset + limit > VENUE_TRADES_COUNT_CAP)
    throw new RangeError(`offset + limit must be at most ${VENUE_TRADES_COUNT_CAP}`);
  const from = query.fromTime ?? Number.MIN_SAFE_INTEGER;
  const to = query.toTime ?? Number.MAX_SAFE_INTEGER;
  if (from > to) return { rows: [], total: 0, capped: false };
  const lo = from <= 0 ? 0 : await firstIdFrom(run, from);
  const hi = to >= Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : (await firstIdFrom(run, to + 1)) - 1;
  const shape: Shape =
    query.userId === undefined
      ? query.market === undefined
        ? 'all'
        : 'market'
      : query.market === undefined
        ? 'user'
        : 'userMarket';
  const values: Record<string, number | string> = {
    lo,
    hi,
    ...(query.userId !== undefined && { user: query.userId }),
    ...(query.market !== undefined && { market: query.market }),
  };
  const params = SHAPE_PARAMS[shape].map((name) => values[name] as number | string);
  const [rows, beyond] = await Promise.all([
    run(`venueTrades:${shape}`, [...params, limit, offset]),
    run(`venueTradesBeyond:${shape}`, [...params, VENUE_TRADES_COUNT_CAP]),
  ]);
  const capped = beyond.length > 0;
  const total = capped
    ? VENUE_TRADES_COUNT_CAP
    : num((await run(`venueTradesCount:${shape}`, params))[0]?.[0] ?? 0);
  return { rows: rows.map(tradeRow), total, capped };
}
