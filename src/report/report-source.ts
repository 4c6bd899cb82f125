/**
 * @module report-source — reads what a user's report (account-report.ts) is computed from: the
 * user's spot bills up to the period's end and the market's trades, from the history store; and
 * the market to report on when none is named (the one the user traded in the period).
 */
import {
  MAX_PAGE_SIZE,
  MAX_TRADES_LIMIT,
  type BillRow,
  type HistoryStore,
  type TradeRow,
} from '../store/history-store.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import { accountReport, type AccountReport } from './account-report.ts';

/** The most bills or trades one report reads (a sandbox's scale; a refusal beyond it). */
export const MAX_REPORT_ROWS = 1_000_000;

/** Why a report cannot be made (a problem with the request: refused, nothing read further). */
export class ReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportError';
  }
}

async function allBills(history: HistoryStore, userId: number, to: number): Promise<BillRow[]> {
  const out: BillRow[] = [];
  for (let pageIndex = 1; ; pageIndex++) {
    const page = await history.bills(userId, { endTime: to, pageIndex, pageSize: MAX_PAGE_SIZE });
    out.push(...page.rows);
    if (page.rows.length < MAX_PAGE_SIZE || out.length >= page.total) return out;
    if (out.length > MAX_REPORT_ROWS)
      throw new ReportError(`more than ${MAX_REPORT_ROWS} bills: choose a shorter period`);
  }
}

async function marketTrades(history: HistoryStore, market: string, to: number) {
  const out: TradeRow[] = [];
  for (let since = 0; ;) {
    const rows = await history.trades(market, { sinceTradeId: since, limit: MAX_TRADES_LIMIT });
    for (const r of rows) if (r.time <= to) out.push(r);
    const last = rows[rows.length - 1];
    if (rows.length < MAX_TRADES_LIMIT || last === undefined || last.time > to) return out;
    since = last.id;
    if (out.length > MAX_REPORT_ROWS)
      throw new ReportError(`more than ${MAX_REPORT_ROWS} trades: choose a shorter period`);
  }
}

/**
 * The report of `userId` on `market` (undefined: the one market it traded in the period) from
 * `from` (undefined: the user's first bill, or `to` without one) to `to` (ms, inclusive). Throws a
 * ReportError for an unknown market, a period that ends before it starts, or no market to choose.
 */
export async function readReport(
  venue: { readonly engine: VenueState; readonly history: HistoryStore },
  userId: number,
  marketName: string | undefined,
  fromOrFirstBill: number | undefined,
  to: number,
): Promise<AccountReport> {
  const { engine, history } = venue;
  if (fromOrFirstBill !== undefined && to < fromOrFirstBill)
    throw new ReportError(
      `the period ends (${new Date(to).toISOString()}) before it starts (${new Date(fromOrFirstBill).toISOString()})`,
    );
  const bills = await allBills(history, userId, to);
  // Not 0: the account's value over time would start in 1970, at no price.
  const from = fromOrFirstBill ?? bills.reduce((first, b) => Math.min(first, b.time), to);
  let name = marketName;
  if (name === undefined) {
    // A fill is a buy or sell bill in each of its market's two coins, of one order in one command.
    const keysOf = new Map<string, Set<string>>();
    for (const b of bills)
      if (b.time >= from && (b.billType === 'buy' || b.billType === 'sell'))
        keysOf.set(b.coin, (keysOf.get(b.coin) ?? new Set()).add(`${Math.floor(b.id / 2 ** 20)}:${b.ref}`));
    const candidates = engine
      .markets()
      .filter((m) => [...(keysOf.get(m.base) ?? [])].some((k) => keysOf.get(m.quote)?.has(k) === true))
      .map((m) => m.name);
    if (candidates.length !== 1)
      throw new ReportError(
        candidates.length === 0
          ? 'the user made no trade in the period: name the market (market, --market)'
          : `the user traded on several markets (${candidates.join(', ')}): name the market (market, --market)`,
      );
    name = candidates[0] as string;
  }
  const market = engine.market(name);
  if (market === undefined) throw new ReportError(`unknown market '${name.slice(0, 40)}'`);
  const trades = await marketTrades(history, market.name, to);
  const decimals = (coin: string): number => engine.coin(coin)?.unitDecimal ?? 0;
  return accountReport({
    market,
    baseDecimals: decimals(market.base),
    quoteDecimals: decimals(market.quote),
    decimalsOf: decimals,
    from,
    to,
    bills,
    trades,
  });
}
