/**
 * @module margin-views — the signed margin reads (issue 14; leverPerm): the isolated and cross
 * accounts (getLeverAssetsInfo, getCrossAssets), the lending offers (getLoans), loan records
 * (getLoanRecords, getFinanceRecords) and repayments (getRepayments, getCrossRepayRecords). They
 * read the engine's margin view (`engine.margin`; open loan records) and the history store (closed
 * records and every repayment, issue 29) and answer field for field as the reference
 * (src/api/wire/margin-wire.ts builds every shape; docs/margin.md gives the meanings). Lists page with
 * `pageIndex` (from 1) and `pageSize` (1..100, default 10), newest first; an empty page is `[]`.
 *
 * Values in USD, BTC and CNY: a coin is valued at the last price of its `<coin>_usdt` market (USDT
 * counts as USD one for one), else through `<coin>_btc` and `btc_usdt`; a coin without such a
 * price is worth 0 in those fields. CNY is USD × CNY_PER_USD.
 */
import { CROSS_ACCOUNT, ISOLATED_ACCOUNT } from '../../../domain/commands.ts';
import type { CoinSpec } from '../../../domain/specs.ts';
import type { MarginAccountView, MarginCoinView } from '../../../engine/margin.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import type { LoanRecord, RepaymentRecord, LoanStatus } from '../../../margin/loans.ts';
import { LOAN_STATUS } from '../../../margin/loans.ts';
import { ratio, type CoinPosition, type Ratio } from '../../../margin/lines.ts';
import {
  crossAssets,
  crossRepaymentItem,
  getLoansAnswer,
  leverAssetsInfoAnswer,
  leverObject,
  loanOfferItem,
  loanRecord,
  repaymentItem,
  type CoinView,
  type Converter,
  type CrossAssetsWire,
  type CrossRisk,
} from '../../wire/margin-wire.ts';
import type { LiquidationRecord } from '../../../margin/liquidation.ts';
import { liquidationWire, type LiquidationWire } from '../../wire/liquidation-wire.ts';
import type { MarginBillRow } from '../../../store/history-store.ts';
import type { Args, Params } from '../../edge/endpoint.ts';
import { ANY_CASE_COIN, choice, ID, MARGIN_MARKET, optional, pageParams } from '../../edge/readers.ts';
import { refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { lendingSettingsOf } from './margin-params.ts';
import { billRecord, billsWindow, BILLS_WINDOW_PARAMS } from './account.ts';
import { awaitHistory, signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';

/** CNY per USD for the `…CNY` fields: a display constant (the venue has no CNY market). */
export const CNY_PER_USD: Ratio = ratio(72, 10);
const DEFAULT_PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 100;

/** The lists' pageIndex (from 1) and pageSize (1..100, default 10). */
const PAGE_PARAMS = pageParams(1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
type Page = Args<typeof PAGE_PARAMS>;

/** The page of `rows` (already newest first) that pageIndex and pageSize name. */
function page<T>({ pageIndex, pageSize }: Page, rows: readonly T[]): T[] {
  return rows.slice((pageIndex - 1) * pageSize, pageIndex * pageSize);
}

const resultReply = (result: unknown): ApiReply => ({ json: successBody({ result }) });

const coinView = (c: CoinSpec): CoinView => ({
  name: c.name,
  unitDecimal: c.unitDecimal,
  fundsType: c.fundsType,
});

/** The value of `units` of `coin` in whole units of `target` at the markets' last prices, if any. */
function priceConverter(engine: VenueState): Converter {
  /** Whole `quote` per smallest unit of `coin` through the market `<coin>_<quote>`. */
  const direct = (coin: string, quote: string): Ratio | undefined => {
    const market = engine.market(`${coin}_${quote}`);
    const price = market === undefined ? 0 : engine.lastPrice(market.name);
    const base = engine.coin(coin);
    if (market === undefined || price <= 0 || base === undefined) return undefined;
    // price ticks × 10^-priceScale whole quote per whole base; per base unit: ÷ 10^baseDecimal.
    return ratio(BigInt(price), 10n ** BigInt(market.priceScale + base.unitDecimal));
  };
  const whole = (coin: string): Ratio | undefined => {
    const c = engine.coin(coin);
    return c === undefined ? undefined : ratio(1n, 10n ** BigInt(c.unitDecimal));
  };
  const mul = (a: Ratio, b: Ratio): Ratio => ({ num: a.num * b.num, den: a.den * b.den });
  const usdPerUnit = (coin: string): Ratio | undefined => {
    if (coin === 'usdt') return whole(coin);
    const viaUsdt = direct(coin, 'usdt');
    if (viaUsdt !== undefined) return viaUsdt;
    const viaBtc = direct(coin, 'btc');
    const btcUsd = direct('btc', 'usdt');
    const btcUnit = engine.coin('btc');
    if (viaBtc === undefined || btcUsd === undefined || btcUnit === undefined) return undefined;
    // whole btc per coin unit × usd per btc unit × btc units per whole btc.
    return mul(mul(viaBtc, btcUsd), ratio(10n ** BigInt(btcUnit.unitDecimal)));
  };
  const times = (per: Ratio | undefined, units: number): Ratio | undefined =>
    per === undefined ? undefined : { num: per.num * BigInt(units), den: per.den };
  return {
    usd: (coin, units) => times(usdPerUnit(coin), units),
    btc: (coin, units) => {
      if (coin === 'btc') return times(whole('btc'), units);
      const usd = times(usdPerUnit(coin), units);
      const btcUsdWhole = times(usdPerUnit('btc'), 10 ** (engine.coin('btc')?.unitDecimal ?? 8));
      if (usd === undefined || btcUsdWhole === undefined || btcUsdWhole.num === 0n) return undefined;
      return { num: usd.num * btcUsdWhole.den, den: usd.den * btcUsdWhole.num };
    },
    cnyPerUsd: CNY_PER_USD,
  };
}

const position = (c: MarginCoinView | undefined, coin: string): CoinPosition => ({
  coin,
  available: c?.available ?? 0,
  frozen: c?.frozen ?? 0,
  principal: c?.borrowed ?? 0,
  interest: c?.interest ?? 0,
});

/**
 * `getLeverAssetsInfo`: no parameters. One lever object per isolated account the user has opened
 * (a transfer in opens it), in market order. ccxt's fetchBalance({marginMode:'isolated'}) reads
 * `fShowName`, `fAvailableUSD`, `couldTransferOutFiat`, `fFreeze` of each.
 */
function getLeverAssetsInfo(ctx: SignedContext): ApiReply {
  const { engine } = ctx;
  const convert = priceConverter(engine);
  const levers = engine.margin
    .accountsOf(ctx.userId)
    .filter((a) => a.acctType === ISOLATED_ACCOUNT)
    .flatMap((a) => {
      const market = engine.market(a.market);
      const base = market === undefined ? undefined : engine.coin(market.base);
      const quote = market === undefined ? undefined : engine.coin(market.quote);
      if (market === undefined || base === undefined || quote === undefined) return [];
      const b = a.coins.find((c) => c.coin === base.name);
      const q = a.coins.find((c) => c.coin === quote.name);
      const risk = engine.risk.accountRisk(ctx.userId, market.name);
      return [
        leverObject({
          market: market.name,
          priceScale: market.priceScale,
          base: coinView(base),
          quote: coinView(quote),
          settings: a.settings,
          basePosition: position(b, base.name),
          quotePosition: position(q, quote.name),
          canLoanIn: { base: b?.borrowLimit ?? 0, quote: q?.borrowLimit ?? 0 },
          transferOut: { base: b?.transferOutLimit ?? 0, quote: q?.transferOutLimit ?? 0 },
          // At the mark (issue 15); before the market's first trade, as the margin view values it.
          riskRateBp: risk?.riskRateBp ?? a.riskRateBp,
          unwind: risk?.unwindPrice,
          repayLock: risk?.repayLock ?? false,
          level: risk?.level,
          version: engine.lastSeq,
          convert,
        }),
      ];
    });
  return { json: leverAssetsInfoAnswer(levers, ctx.key.permissions.lever) };
}

/**
 * `getCrossAssets`: no parameters. `result` as the reference: JSON numbers, uppercase keys, one
 * item per coin of the venue (zeros for a coin the account has never held), the totals in USD.
 * ccxt's fetchBalance({marginMode:'cross'}) reads `key`, `amount`, `canTransferOut`, `freeze`.
 */
function getCrossAssets(ctx: SignedContext): ApiReply {
  return resultReply(crossAssetsResult(ctx.engine, ctx.userId));
}

/** getCrossAssets' `result` for a user (also the push_user_cross_asset payload). */
export function crossAssetsResult(engine: VenueState, userId: number): CrossAssetsWire {
  const account: MarginAccountView | undefined = engine.margin.account(userId, CROSS_ACCOUNT, '');
  const coins = engine.coins().map((coin) => {
    const c = account?.coins.find((x) => x.coin === coin.name);
    return {
      coin: coinView(coin),
      position: position(c, coin.name),
      canTransferOut: c?.transferOutLimit ?? 0,
    };
  });
  const risk = crossRisk(engine, userId);
  return crossAssets(coins, risk.riskRateBp ?? account?.riskRateBp, priceConverter(engine), {
    level: risk.level,
    repayLock: risk.repayLock,
  });
}

/**
 * A cross account's risk state as the engine's risk step keeps it (src/engine/risk-cross.ts): `level`
 * 1 normal, 2 flagged at the notice line, 3 locked for liquidation (`repayLock`), and the risk
 * rate at the marks (undefined without debt or before the marks; the answers then fall back on
 * the margin view's rate at last prices).
 */
export function crossRisk(
  engine: VenueState,
  userId: number,
): CrossRisk & { riskRateBp: number | undefined } {
  const r = engine.risk.crossRisk(userId);
  return { level: r.level, repayLock: r.repayLock, riskRateBp: r.riskRateBp };
}

/**
 * `getLoans`: coin (any case), [pageIndex], [pageSize]. The coin's open offers with something left
 * to lend, cheapest first (ccxt's fetchBorrowRate takes the first). `code` is the string "1000",
 * as in the reference's sample.
 */
const LOANS_PARAMS = { coin: ANY_CASE_COIN, ...PAGE_PARAMS };

function getLoans(ctx: SignedContext, args: Args<typeof LOANS_PARAMS>): ApiReply {
  const { engine } = ctx;
  const coin = args.coin;
  const lending = lendingSettingsOf(engine, coin);
  const items = page(args, engine.margin.openOffers(coin.name)).map((o) =>
    loanOfferItem(o, coinView(coin), lending.minAmount),
  );
  return { json: getLoansAnswer(items) };
}

/** A loan record as the caller sees it. */
function recordOf(ctx: SignedContext, loan: LoanRecord): ReturnType<typeof loanRecord> {
  const { engine } = ctx;
  const coin = engine.coin(loan.coin);
  const lenderUserId = loan.lender.kind === 'system' ? 0 : loan.lender.userId;
  const borrowerUserId = loan.borrower.kind === 'system' ? 0 : loan.borrower.userId;
  return loanRecord({
    loan,
    coin: coin === undefined ? { name: loan.coin, unitDecimal: 8, fundsType: 0 } : coinView(coin),
    lenderUserId,
    lenderName: lenderUserId === 0 ? 'lending pool' : (engine.userName(lenderUserId) ?? ''),
    borrowerName: engine.userName(borrowerUserId) ?? '',
    viewerIsBorrower: borrowerUserId === ctx.userId,
    venueSharePpm: engine.margin.lendingSettings(loan.coin)?.venueSharePpm ?? 0,
    borrowerLocked:
      loan.borrower.kind === 'isolated' && engine.risk.isLocked(borrowerUserId, loan.borrower.market),
  });
}

const newestFirst = (a: { id: number }, b: { id: number }): number => b.id - a.id;

/** pageIndex and pageSize as the wire gives them, and how many of the newest rows they reach. */
function pageReach({ pageIndex, pageSize }: Page): { pageIndex: number; pageSize: number; reach: number } {
  return { pageIndex, pageSize, reach: pageIndex * pageSize };
}

/**
 * Open records (the engine's) and closed ones (the history store's, issue 29) as one list, newest
 * first. Should the two overlap (a gateway's engine behind the history store), the closed record wins.
 */
function mergeRecords(open: readonly LoanRecord[], closed: readonly LoanRecord[]): LoanRecord[] {
  const closedIds = new Set(closed.map((l) => l.id));
  return [...closed, ...open.filter((l) => !closedIds.has(l.id))].sort(newestFirst);
}

/** Every open loan record borrowed by the user's margin accounts, newest first. */
function borrowedBy(engine: VenueState, userId: number): LoanRecord[] {
  return engine.margin
    .accountsOf(userId)
    .flatMap((a) => engine.margin.loansOf(userId, a.acctType, a.market))
    .sort(newestFirst);
}

const STATUSES = Object.values(LOAN_STATUS).map(String);
const LOAN_RECORDS_PARAMS = {
  loanId: optional(ID),
  marketName: optional(MARGIN_MARKET),
  status: optional(choice(STATUSES)),
  ...PAGE_PARAMS,
};

/**
 * `getLoanRecords`: [loanId: the records of the caller's offer], [marketName: one isolated account],
 * [status 1..6], [pageIndex], [pageSize]. Without loanId, the records the caller borrowed (every
 * margin account, or the market's isolated one). `{code:1000, message:"success", result:[record]}`.
 * Open records come from the engine, closed ones from the history store (awaited to the engine's
 * position first).
 */
async function getLoanRecords(ctx: SignedContext, args: Args<typeof LOAN_RECORDS_PARAMS>): Promise<ApiReply> {
  const { engine, userId } = ctx;
  const { loanId: offerId, marketName: market } = args;
  const status = args.status === undefined ? undefined : Number(args.status);
  const { pageIndex, pageSize, reach } = pageReach(args);
  let open: LoanRecord[];
  let closed: Promise<LoanRecord[]>;
  const history = ctx.venue.history;
  if (offerId !== undefined) {
    if (!engine.margin.offersOf(userId).some((o) => o.id === offerId))
      refuse('LOAN_NOT_FOUND', `no lending offer ${offerId} of this account`);
    open = engine.margin.loansLentBy(userId).filter((l) => l.offerId === offerId);
    await awaitHistory(ctx);
    closed = history.loansLent(userId, { offerId, status, limit: reach });
  } else if (market !== undefined) {
    open = engine.margin.loansOf(userId, ISOLATED_ACCOUNT, market.name);
    await awaitHistory(ctx);
    closed = history.loansBorrowed(userId, {
      acctType: ISOLATED_ACCOUNT,
      market: market.name,
      status,
      limit: reach,
    });
  } else {
    open = borrowedBy(engine, userId);
    await awaitHistory(ctx);
    closed = history.loansBorrowed(userId, { status, limit: reach });
  }
  if (status !== undefined) open = open.filter((l) => l.status === status);
  const records = mergeRecords(open, await closed);
  return resultReply(records.slice((pageIndex - 1) * pageSize, reach).map((l) => recordOf(ctx, l)));
}

/**
 * `getFinanceRecords` (response unknown in the reference; getLoanRecords' shape): [coin],
 * [pageIndex], [pageSize]. The loan records the caller has lent, newest first.
 */
const COIN_PAGE_PARAMS = { coin: optional(ANY_CASE_COIN), ...PAGE_PARAMS };

async function getFinanceRecords(ctx: SignedContext, args: Args<typeof COIN_PAGE_PARAMS>): Promise<ApiReply> {
  const coin = args.coin;
  const { pageIndex, pageSize, reach } = pageReach(args);
  const open = ctx.engine.margin
    .loansLentBy(ctx.userId)
    .filter((l) => coin === undefined || l.coin === coin.name);
  await awaitHistory(ctx);
  const closed = await ctx.venue.history.loansLent(ctx.userId, { coin: coin?.name, limit: reach });
  const records = mergeRecords(open, closed);
  return resultReply(records.slice((pageIndex - 1) * pageSize, reach).map((l) => recordOf(ctx, l)));
}

/**
 * The status of a loan record just after each of its payments (oldest first in `payments`): the
 * record's own status once its principal is all repaid, else auto-repaying (5) for a payment the
 * term-end timer made, repaying (1) otherwise.
 */
function statusesAfter(loan: LoanRecord, payments: readonly RepaymentRecord[]): Map<number, LoanStatus> {
  const out = new Map<number, LoanStatus>();
  let outstanding = loan.amount;
  for (const p of [...payments].sort((a, b) => a.id - b.id)) {
    outstanding -= p.principal;
    out.set(p.id, outstanding <= 0 ? loan.status : p.auto ? LOAN_STATUS.AUTO_REPAYING : LOAN_STATUS.REPAYING);
  }
  return out;
}

/** A loan record by id: open (the engine) or closed (the history store). */
async function anyLoan(ctx: SignedContext, loanId: number): Promise<LoanRecord | undefined> {
  return ctx.engine.margin.loan(loanId) ?? (await ctx.venue.history.closedLoan(loanId));
}

/** The payments (newest first) with each one's status after it, from every payment of their records. */
async function withStatuses(
  ctx: SignedContext,
  payments: readonly RepaymentRecord[],
): Promise<{ payment: RepaymentRecord; status: LoanStatus }[]> {
  const status = new Map<number, LoanStatus>();
  for (const loanId of new Set(payments.map((p) => p.loanId))) {
    const loan = await anyLoan(ctx, loanId);
    if (loan === undefined) continue;
    for (const [id, s] of statusesAfter(loan, await ctx.venue.history.loanRepayments(loanId)))
      status.set(id, s);
  }
  return payments.map((payment) => ({ payment, status: status.get(payment.id) ?? LOAN_STATUS.REPAYING }));
}

/**
 * `getRepayments`: loanRecordId (a record the caller borrowed), [pageIndex], [pageSize]. Its
 * payments, newest first: `{benJin, id, statusShow, status, liXi, actureDate}` (from the history store).
 */
const REPAYMENTS_PARAMS = { loanRecordId: ID, ...PAGE_PARAMS };

async function getRepayments(ctx: SignedContext, args: Args<typeof REPAYMENTS_PARAMS>): Promise<ApiReply> {
  const loanId = args.loanRecordId;
  const { pageIndex, pageSize, reach } = pageReach(args);
  // The engine's record first, then the store brought to the engine's position: a record that
  // closes meanwhile is found in one or the other.
  const open = ctx.engine.margin.loan(loanId);
  await awaitHistory(ctx);
  const loan = open ?? (await ctx.venue.history.closedLoan(loanId));
  const borrower = loan?.borrower;
  if (
    loan === undefined ||
    borrower === undefined ||
    borrower.kind === 'system' ||
    borrower.kind === 'spot' ||
    borrower.userId !== ctx.userId
  )
    return refuse('LOAN_NOT_FOUND', `no loan record ${loanId} of this account`);
  const coin = ctx.engine.coin(loan.coin) as CoinSpec;
  const payments = await ctx.venue.history.loanRepayments(loanId);
  const statuses = statusesAfter(loan, payments);
  const rows = [...payments].sort(newestFirst).slice((pageIndex - 1) * pageSize, reach);
  return resultReply(
    rows.map((p) => repaymentItem(p, statuses.get(p.id) ?? LOAN_STATUS.REPAYING, coinView(coin))),
  );
}

/**
 * `getCrossRepayRecords` (response unknown in the reference): [coin], [pageIndex], [pageSize]. The
 * payments on the caller's cross loans, newest first, as getRepayments' items plus `loanRecordId`
 * and `coinName`.
 */
async function getCrossRepayRecords(
  ctx: SignedContext,
  args: Args<typeof COIN_PAGE_PARAMS>,
): Promise<ApiReply> {
  const coin = args.coin;
  const { pageIndex, pageSize, reach } = pageReach(args);
  await awaitHistory(ctx);
  const newest = await ctx.venue.history.repayments(ctx.userId, {
    acctType: CROSS_ACCOUNT,
    coin: coin?.name,
    limit: reach,
  });
  const rows = await withStatuses(ctx, newest.slice((pageIndex - 1) * pageSize, reach));
  return resultReply(
    rows.map((r) => {
      const c = ctx.engine.coin(r.payment.coin) as CoinSpec;
      return crossRepaymentItem(r.payment, r.status, coinView(c));
    }),
  );
}

/**
 * Refuses, as the engine did before closed records left it (issue 29), a command on a loan record
 * of the caller's that has closed: INVALID_STATE, "already repaid" (its borrower) or "closed" (its
 * lender). An open record, or one that is not the caller's, goes on to the engine.
 */
export async function refuseClosedLoan(
  ctx: SignedContext,
  loanId: number,
  role: 'borrower' | 'lender',
): Promise<void> {
  if (ctx.engine.margin.loan(loanId) !== undefined) return;
  await awaitHistory(ctx);
  const closed = await ctx.venue.history.closedLoan(loanId);
  const who = role === 'borrower' ? closed?.borrower : closed?.lender;
  if (who === undefined || who.kind === 'system' || who.userId !== ctx.userId) return;
  refuse(
    'INVALID_STATE',
    role === 'borrower' ? `loan record ${loanId} is already repaid` : `loan record ${loanId} is closed`,
  );
}

/** A liquidation record on the wire (the user's bills, the operator's `bourse liquidations`). */
export function liquidationOf(engine: VenueState, r: LiquidationRecord): LiquidationWire {
  const market = engine.market(r.market);
  const base = market === undefined ? undefined : engine.coin(market.base);
  const quote = market === undefined ? undefined : engine.coin(market.quote);
  const view =
    market === undefined || base === undefined || quote === undefined
      ? undefined
      : { name: market.name, priceScale: market.priceScale, base: coinView(base), quote: coinView(quote) };
  return liquidationWire(r, view, (name) => {
    const c = engine.coin(name);
    return c === undefined ? undefined : coinView(c);
  });
}

/** The bill types a liquidation books on the account (beside its order's `sell`/`buy`). */
const LIQUIDATION_BILLS: ReadonlySet<string> = new Set([
  'liquidationFee',
  'insuranceCover',
  'repayPrincipal',
  'repayInterest',
]);

/**
 * The liquidation a margin bill belongs to: by its ref (`liquidation:<id>`: the fee, the
 * insurance's cover), or a repayment of the account inside a record's time span (the account is
 * locked meanwhile, so nothing else repays it).
 */
function liquidationOfBill(
  records: readonly LiquidationRecord[],
  bill: MarginBillRow,
): LiquidationRecord | undefined {
  if (!LIQUIDATION_BILLS.has(bill.billType)) return undefined;
  if (bill.ref.startsWith('liquidation:')) {
    const id = Number(bill.ref.slice('liquidation:'.length));
    return records.find((r) => r.id === id);
  }
  return records.find(
    (r) =>
      (r.account.kind === 'cross' ? bill.acctType === CROSS_ACCOUNT : r.market === bill.market) &&
      bill.time >= r.startMs &&
      (r.status === 'running' || bill.time <= r.endMs),
  );
}

/**
 * `getLeverBills` ([coin], [marketName: one isolated account; absent: every one], [dataType],
 * [startDate], [endDate], [pageIndex], [pageSize 10–50]) and `getCrossBills` (the same without
 * marketName): the margin account's bills, newest first, in getSpotBills' item shape plus
 * `marketName` (`btcusdt`; "" for cross), and on a liquidation's bills (its fee, the insurance's
 * cover, its repayments) `liquidation`: the whole record (liquidationWire).
 * `{"code":1000,"message":"success","result":[bill]}`.
 */
const CROSS_BILLS_PARAMS = { coin: optional(ANY_CASE_COIN), ...BILLS_WINDOW_PARAMS };
const LEVER_BILLS_PARAMS = { ...CROSS_BILLS_PARAMS, marketName: optional(MARGIN_MARKET) };

function marginBills(acctType: 1 | 2) {
  return async (ctx: SignedContext, args: Args<typeof LEVER_BILLS_PARAMS>): Promise<ApiReply> => {
    const { engine } = ctx;
    const coin = args.coin;
    const market = acctType === ISOLATED_ACCOUNT ? args.marketName : undefined;
    const window = billsWindow(ctx, args);
    await awaitHistory(ctx);
    const page = await ctx.venue.history.marginBills(ctx.userId, {
      acctType,
      market: market?.name,
      coin: coin?.name,
      ...window,
    });
    const records = engine.risk.liquidations(ctx.userId);
    return resultReply(
      page.rows.map((bill) => {
        const liquidation = records.length === 0 ? undefined : liquidationOfBill(records, bill);
        return {
          ...billRecord(bill, coin ?? engine.coin(bill.coin)),
          marketName: bill.market.replace('_', ''),
          ...(liquidation === undefined ? {} : { liquidation: liquidationOf(engine, liquidation) }),
        };
      }),
    );
  };
}

const lever = <P extends Params>(method: string, params: P, handler: SignedEndpoint<P>['handler']) =>
  signedEndpoint({ method, permission: 'lever', params, handler });

export const MARGIN_VIEW_ENDPOINTS: readonly SignedEndpoint[] = [
  lever('getLeverBills', LEVER_BILLS_PARAMS, marginBills(ISOLATED_ACCOUNT)),
  lever('getCrossBills', CROSS_BILLS_PARAMS, marginBills(CROSS_ACCOUNT)),
  lever('getLeverAssetsInfo', {}, getLeverAssetsInfo),
  lever('getCrossAssets', {}, getCrossAssets),
  lever('getLoans', LOANS_PARAMS, getLoans),
  lever('getLoanRecords', LOAN_RECORDS_PARAMS, getLoanRecords),
  lever('getFinanceRecords', COIN_PAGE_PARAMS, getFinanceRecords),
  lever('getRepayments', REPAYMENTS_PARAMS, getRepayments),
  lever('getCrossRepayRecords', COIN_PAGE_PARAMS, getCrossRepayRecords),
];
