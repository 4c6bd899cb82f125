/**
 * @module margin-wire — the margin answers' shapes, field for field with the reference's types (strings
 * vs numbers), mapped from the margin domain's plain values, and the parsing of a margin
 * `marketName` in every form clients send. Only the HTTP layer uses this module.
 *
 * ## Number formats
 * - Coin amounts: decimal text with the coin's unitDecimal (as getAccountInfo shows them);
 *   `cCanLoanIn` / `fCanLoanIn` with 15 decimals, as in the reference's sample.
 * - Values converted to USD, CNY or BTC (`…USD`, `…CNY`, `…Btc`, `…Convert…`): 8 decimals,
 *   rounded down. USDT counts as USD one for one.
 * - Lines and the multiple: 2 decimals ("1.25", "5.00"); the risk rate: 4 decimals rounded down,
 *   "-" without debt; daily rates as a fraction ("0.0005") with `rateOfDayShow` in percent.
 * - getCrossAssets: JSON numbers (exact text of the units, nearest double), keys uppercase.
 */
import { formatUnits, formatUnitsTrim, type RatePpm } from '../../domain/money.ts';
import { splitMarketName } from '../../domain/specs.ts';
import type { LoanOffer } from '../../margin/lending-book.ts';
import type { CoinPosition, Ratio, UnwindPrice } from '../../margin/lines.ts';
import { LOAN_STATUS, type LoanRecord, type LoanStatus, type RepaymentRecord } from '../../margin/loans.ts';
import { refuse, type Outcome, type Units } from '../../margin/movement.ts';
import { BP, type MarginSettings } from '../../margin/settings.ts';

// ---------------------------------------------------------------------------------------------
// marketName

export interface MarketNameEntry {
  /** `<base>_<quote>`. */
  readonly name: string;
}

/**
 * Resolves a margin `marketName` against the markets: `BTC/USDT` (ccxt), `btcusdt` (the SDKs)
 * and `btc_usdt` (the spot form), in any letter case. Refusals: UNKNOWN_MARKET for an empty,
 * malformed or unknown name, and for a concatenated name two markets share (`ab`+`c`, `a`+`bc`).
 */
export function parseMarginMarketName<M extends MarketNameEntry>(
  text: string,
  markets: readonly M[],
): Outcome<{ market: M }> {
  const lower = text.trim().toLowerCase();
  const unknown = refuse(
    'UNKNOWN_MARKET',
    `unknown marketName '${text}' (use BTC/USDT, btcusdt or btc_usdt)`,
  );
  if (lower.length === 0 || lower.length > 40) return unknown;
  const slashed = lower.includes('/') ? lower.split('/') : undefined;
  if (slashed !== undefined) {
    if (slashed.length !== 2 || slashed[0] === '' || slashed[1] === '') return unknown;
    const m = markets.find((x) => x.name === `${slashed[0]}_${slashed[1]}`);
    return m === undefined ? unknown : { ok: true, market: m };
  }
  if (lower.includes('_')) {
    const m = splitMarketName(lower) === undefined ? undefined : markets.find((x) => x.name === lower);
    return m === undefined ? unknown : { ok: true, market: m };
  }
  const found = markets.filter((x) => x.name.replace('_', '') === lower);
  if (found.length === 1) return { ok: true, market: found[0] as M };
  if (found.length > 1)
    return refuse(
      'UNKNOWN_MARKET',
      `marketName '${text}' is ambiguous (${found.map((x) => x.name).join(', ')}): use BTC/USDT or btc_usdt`,
    );
  return unknown;
}

/** The lever object's `key`: the market name without underscore ("btcusdt"). */
export const leverKey = (marketName: string): string => marketName.replace('_', '');

// ---------------------------------------------------------------------------------------------
// shared formatting

export interface CoinView {
  readonly name: string;
  readonly unitDecimal: number;
  /** The interface's fund type id. */
  readonly fundsType: number;
}

/** Values in whole USD and BTC (not smallest units), and the CNY per USD rate. */
export interface Converter {
  usd(coin: string, units: Units): Ratio | undefined;
  btc(coin: string, units: Units): Ratio | undefined;
  readonly cnyPerUsd: Ratio;
}

const CONVERTED_DECIMALS = 8;

/** A rational as decimal text with `decimals` digits, rounded toward zero. */
export function formatRatio(r: Ratio, decimals: number): string {
  const scaled = (r.num * 10n ** BigInt(decimals)) / r.den;
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(decimals + 1, '0');
  const text = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative ? `-${text}` : text;
}

/** Units with 15 decimals, as the sample's `cCanLoanIn` ("0.002115400000000"). */
const formatUnits15 = (u: Units, unitDecimal: number): string =>
  unitDecimal === 0 ? `${u}.${'0'.repeat(15)}` : formatUnits(u, unitDecimal) + '0'.repeat(15 - unitDecimal);
const formatBp = (bp: number): string => (bp / BP).toFixed(2);
/** A daily rate in ppm as the fraction the wire shows ("0.0005"). */
export const formatRateFraction = (ppm: RatePpm): string => formatUnitsTrim(ppm, 6);
/** The risk rate for the wire: 4 decimals rounded down, "-" without debt. */
export const formatRiskRate = (bp: number | undefined): string =>
  bp === undefined ? '-' : formatRatio({ num: BigInt(bp), den: BigInt(BP) }, 4);

const zero: Ratio = { num: 0n, den: 1n };
const mulR = (a: Ratio, b: Ratio): Ratio => ({ num: a.num * b.num, den: a.den * b.den });
const addR = (a: Ratio, b: Ratio): Ratio => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
const negR = (a: Ratio): Ratio => ({ num: -a.num, den: a.den });

// ---------------------------------------------------------------------------------------------
// getLeverAssetsInfo

export interface LeverView {
  /** `<base>_<quote>`. */
  readonly market: string;
  readonly priceScale: number;
  readonly base: CoinView;
  readonly quote: CoinView;
  readonly settings: MarginSettings;
  readonly basePosition: CoinPosition;
  readonly quotePosition: CoinPosition;
  /** `borrowLimit` in each coin. */
  readonly canLoanIn: { readonly base: Units; readonly quote: Units };
  /** `transferOutLimit` in each coin. */
  readonly transferOut: { readonly base: Units; readonly quote: Units };
  /** `riskRateBp` of the account, `undefined` without debt. */
  readonly riskRateBp: number | undefined;
  readonly unwind: UnwindPrice | undefined;
  /** Locked for liquidation (issue 15). */
  readonly repayLock: boolean;
  /**
   * The engine's level (issue 15: 1 normal, 2 flagged at the notice line, 3 locked for
   * liquidation); absent: drawn from the risk rate (`leverLevel`).
   */
  readonly level?: 1 | 2 | 3 | undefined;
  /** A number that grows with every change of the account (the sequence of its last change). */
  readonly version: number;
  readonly convert: Converter;
}

/** The lever object of the reference §7.1: every field, strings except the listed numbers and `repayLock`. */
export interface LeverWire {
  cNetUSD: string;
  repayLeverShow: string;
  cCanLoanIn: string;
  fNetCNY: string;
  fLoanIn: string;
  repayLevel: number;
  level: number;
  netConvertCNY: string;
  cFreeze: string;
  cUnitTag: string;
  version: number;
  cAvailableUSD: string;
  cNetCNY: string;
  riskRate: string;
  fAvailableUSD: string;
  fNetUSD: string;
  cShowName: string;
  leverMultiple: string;
  couldTransferOutFiat: string;
  noticeLine: string;
  fFreeze: string;
  cUnitDecimal: number;
  fCanLoanIn: string;
  cAvailable: string;
  repayLock: boolean;
  status: number;
  forbidType: number;
  totalConvertCNY: string;
  cAvailableCNY: string;
  unwindPrice: string;
  fOverdraft: string;
  fShowName: string;
  statusShow: string;
  cOverdraft: string;
  netConvertUSD: string;
  cNetBtc: string;
  loanInConvertCNY: string;
  fAvailableCNY: string;
  key: string;
  fNetBtc: string;
  fUnitDecimal: number;
  loanInConvertUSD: string;
  showName: string;
  startLine: string;
  totalConvertUSD: string;
  couldTransferOutCoin: string;
  cEnName: string;
  leverMultipleInterest: string;
  fAvailable: string;
  fEnName: string;
  forceRepayLine: string;
  cLoanIn: string;
}

/** "正常" (normal), URL-encoded as the real venue sent it. */
export const STATUS_SHOW_NORMAL = encodeURIComponent('正常');

/** The account's level: 1 normal, 2 at or below the notice line, 3 at or below the liquidation line. */
export function leverLevel(riskBp: number | undefined, s: MarginSettings): number {
  if (riskBp === undefined || riskBp > s.noticeLineBp) return 1;
  return riskBp > s.forceRepayLineBp ? 2 : 3;
}

/**
 * One lever object. Meanings: `cAvailable`/`fAvailable` available, `cFreeze`/`fFreeze` frozen,
 * `cLoanIn`/`fLoanIn` principal owed, `cOverdraft`/`fOverdraft` accrued interest owed,
 * `cCanLoanIn`/`fCanLoanIn` the borrowing limit, `couldTransferOut…` the transfer-out limit;
 * `…Available{USD,CNY}` value what the coin holds (available + frozen: ccxt reads `fAvailableUSD`
 * as the total), `…Net…` what it holds less what it owes; `total…`, `loanIn…` and `net…Convert…`
 * the whole account's assets, debt and their difference. `unwindPrice` "0" when none.
 */
export function leverObject(v: LeverView): LeverWire {
  const b = v.basePosition;
  const q = v.quotePosition;
  const amt = (u: Units, c: CoinView): string => formatUnits(u, c.unitDecimal);
  const held = (p: CoinPosition): Units => p.available + p.frozen;
  const owed = (p: CoinPosition): Units => p.principal + p.interest;
  const usd = (c: CoinView, u: Units): Ratio => (u === 0 ? zero : (v.convert.usd(c.name, u) ?? zero));
  const btc = (c: CoinView, u: Units): Ratio => (u === 0 ? zero : (v.convert.btc(c.name, u) ?? zero));
  const net = (c: CoinView, p: CoinPosition, f: typeof usd): Ratio =>
    addR(f(c, held(p)), negR(f(c, owed(p))));
  const show = (r: Ratio): string => formatRatio(r, CONVERTED_DECIMALS);
  const cny = (r: Ratio): string => show(mulR(r, v.convert.cnyPerUsd));
  const total = addR(usd(v.base, held(b)), usd(v.quote, held(q)));
  const debt = addR(usd(v.base, owed(b)), usd(v.quote, owed(q)));
  const netAll = addR(total, negR(debt));
  const upper = (c: CoinView): string => c.name.toUpperCase();
  const level = v.level ?? leverLevel(v.riskRateBp, v.settings);
  return {
    cNetUSD: show(net(v.base, b, usd)),
    repayLeverShow: '-',
    cCanLoanIn: formatUnits15(v.canLoanIn.base, v.base.unitDecimal),
    fNetCNY: cny(net(v.quote, q, usd)),
    fLoanIn: amt(q.principal, v.quote),
    repayLevel: 0,
    level,
    netConvertCNY: cny(netAll),
    cFreeze: amt(b.frozen, v.base),
    cUnitTag: upper(v.base),
    version: v.version,
    cAvailableUSD: show(usd(v.base, held(b))),
    cNetCNY: cny(net(v.base, b, usd)),
    riskRate: formatRiskRate(v.riskRateBp),
    fAvailableUSD: show(usd(v.quote, held(q))),
    fNetUSD: show(net(v.quote, q, usd)),
    cShowName: upper(v.base),
    leverMultiple: formatBp(v.settings.leverMultipleBp),
    couldTransferOutFiat: amt(v.transferOut.quote, v.quote),
    noticeLine: formatBp(v.settings.noticeLineBp),
    fFreeze: amt(q.frozen, v.quote),
    cUnitDecimal: v.base.unitDecimal,
    fCanLoanIn: formatUnits15(v.canLoanIn.quote, v.quote.unitDecimal),
    cAvailable: amt(b.available, v.base),
    repayLock: v.repayLock,
    status: 1,
    forbidType: 0,
    totalConvertCNY: cny(total),
    cAvailableCNY: cny(usd(v.base, held(b))),
    unwindPrice:
      v.unwind === undefined ? formatUnits(0, v.priceScale) : formatUnits(v.unwind.priceTicks, v.priceScale),
    fOverdraft: amt(q.interest, v.quote),
    fShowName: upper(v.quote),
    statusShow: STATUS_SHOW_NORMAL,
    cOverdraft: amt(b.interest, v.base),
    netConvertUSD: show(netAll),
    cNetBtc: show(net(v.base, b, btc)),
    loanInConvertCNY: cny(debt),
    fAvailableCNY: cny(usd(v.quote, held(q))),
    key: leverKey(v.market),
    fNetBtc: show(net(v.quote, q, btc)),
    fUnitDecimal: v.quote.unitDecimal,
    loanInConvertUSD: show(debt),
    showName: `${upper(v.base)}/${upper(v.quote)}`,
    startLine: formatBp(v.settings.startLineBp),
    totalConvertUSD: show(total),
    couldTransferOutCoin: amt(v.transferOut.base, v.base),
    cEnName: upper(v.base),
    leverMultipleInterest: formatBp(v.settings.leverMultipleInterestBp),
    fAvailable: amt(q.available, v.quote),
    fEnName: upper(v.quote),
    forceRepayLine: formatBp(v.settings.forceRepayLineBp),
    cLoanIn: amt(b.principal, v.base),
  };
}

/** The whole getLeverAssetsInfo answer (reference §7.1 envelope). */
export function leverAssetsInfoAnswer(
  levers: readonly LeverWire[],
  leverPerm: boolean,
): {
  code: number;
  message: { des: string; isSuc: boolean; datas: { leverPerm: boolean; levers: readonly LeverWire[] } };
} {
  return { code: 1000, message: { des: 'success', isSuc: true, datas: { leverPerm, levers } } };
}

// ---------------------------------------------------------------------------------------------
// getCrossAssets

export interface CrossCoinView {
  readonly coin: CoinView;
  readonly position: CoinPosition;
  /** `transferOutLimit` in this coin. */
  readonly canTransferOut: Units;
}

export interface CrossItemWire {
  fundType: number;
  loanIn: number;
  amount: number;
  freeze: number;
  overdraft: number;
  key: string;
  canTransferOut: number;
}

export interface CrossAssetsWire {
  loanIn: number;
  total: number;
  riskRate: string;
  net: number;
  list: CrossItemWire[];
  /** Bourse's (issue 15; the reference's sample has neither): the lever object's `level` and `repayLock`. */
  level: number;
  repayLock: boolean;
}

/** A cross account's risk state: `level` 1 normal, 2 at the notice line, 3 at the liquidation line. */
export interface CrossRisk {
  readonly level: 1 | 2 | 3;
  readonly repayLock: boolean;
}

/**
 * The getCrossAssets `result` (reference §8): numbers, uppercase keys. Per coin: `amount` what
 * the account holds (available + frozen; ccxt's total), `freeze` frozen, `canTransferOut` (ccxt's
 * free), `loanIn` principal owed, `overdraft` interest owed. Top level: `total` assets, `loanIn`
 * debt and `net` their difference, in USD (8 decimals, rounded down); `level` and `repayLock` as
 * the lever object's (issue 15, Bourse's own fields).
 */
export function crossAssets(
  coins: readonly CrossCoinView[],
  riskRateBp: number | undefined,
  convert: Converter,
  risk: CrossRisk = { level: 1, repayLock: false },
): CrossAssetsWire {
  const num = (u: Units, c: CoinView): number => Number(formatUnits(u, c.unitDecimal));
  let total = zero;
  let debt = zero;
  const list: CrossItemWire[] = [];
  for (const { coin, position: p, canTransferOut } of coins) {
    const held = p.available + p.frozen;
    const owed = p.principal + p.interest;
    if (held > 0) total = addR(total, convert.usd(coin.name, held) ?? zero);
    if (owed > 0) debt = addR(debt, convert.usd(coin.name, owed) ?? zero);
    list.push({
      fundType: coin.fundsType,
      loanIn: num(p.principal, coin),
      amount: num(held, coin),
      freeze: num(p.frozen, coin),
      overdraft: num(p.interest, coin),
      key: coin.name.toUpperCase(),
      canTransferOut: num(canTransferOut, coin),
    });
  }
  const n = (r: Ratio): number => Number(formatRatio(r, CONVERTED_DECIMALS));
  return {
    loanIn: n(debt),
    total: n(total),
    riskRate: formatRiskRate(riskRateBp),
    net: n(addR(total, negR(debt))),
    list,
    level: risk.level,
    repayLock: risk.repayLock,
  };
}

// ---------------------------------------------------------------------------------------------
// getLoans

export interface LoanOfferWire {
  interestRateOfDay: string;
  repaymentDay: string;
  amount: string;
  balance: string;
  rateOfDayShow: string;
  coinName: string;
  lowestAmount: string;
}

/** One getLoans item (reference §7.4): every field a string; `amount` first offered, `balance` unlent. */
export function loanOfferItem(o: LoanOffer, coin: CoinView, lowestAmount: Units): LoanOfferWire {
  return {
    interestRateOfDay: formatRateFraction(o.dailyRatePpm),
    repaymentDay: String(o.days),
    amount: formatUnitsTrim(o.amount, coin.unitDecimal),
    balance: formatUnitsTrim(o.remaining, coin.unitDecimal),
    rateOfDayShow: `${formatUnitsTrim(o.dailyRatePpm, 4)} %`,
    coinName: coin.name.toUpperCase(),
    lowestAmount: formatUnitsTrim(lowestAmount, coin.unitDecimal),
  };
}

/** The getLoans answer: `code` is the string "1000" in the reference's sample, kept so. */
export function getLoansAnswer(items: readonly LoanOfferWire[]): {
  code: string;
  message: string;
  result: readonly LoanOfferWire[];
} {
  return { code: '1000', message: 'success', result: items };
}

// ---------------------------------------------------------------------------------------------
// getLoanRecords, getFinanceRecords

/** English names of the loan statuses, shown as `statusShow`. */
export const LOAN_STATUS_SHOW: Readonly<Record<LoanStatus, string>> = Object.freeze({
  [LOAN_STATUS.REPAYING]: 'repaying',
  [LOAN_STATUS.REPAID]: 'repaid',
  [LOAN_STATUS.NEEDS_LIQUIDATION]: 'needs liquidation',
  [LOAN_STATUS.LIQUIDATED]: 'liquidated and repaid',
  [LOAN_STATUS.AUTO_REPAYING]: 'auto-repaying',
  [LOAN_STATUS.AUTO_REPAID]: 'auto-repaid',
});

export interface LoanRecordView {
  readonly loan: LoanRecord;
  readonly coin: CoinView;
  /** The lender's user id, 0 for the platform lending pool; and names. */
  readonly lenderUserId: number;
  readonly lenderName: string;
  readonly borrowerName: string;
  /** Whether the caller is the borrower (`isIn`). */
  readonly viewerIsBorrower: boolean;
  readonly venueSharePpm: RatePpm;
  /** Locked for liquidation (issue 15). */
  readonly borrowerLocked: boolean;
}

export interface LoanRecordWire {
  createTime: number;
  tstatus: number;
  withoutLxDays: number;
  id: number;
  fundType: number;
  outUserId: number;
  inUserId: number;
  repayDate: number;
  sourceType: number;
  status: number;
  balanceWithoutLxDays: number;
  riskManage: number;
  rateForm: number;
  loanId: number;
  nextRepayDate: number;
  statusShow: string;
  freezId: string;
  withoutLxAmount: string;
  hasRepay: string;
  amount: string;
  fwfScale: string;
  rate: string;
  marketName: string;
  hasLx: string;
  balanceAmount: string;
  zheLx: string;
  outUserFees: string;
  dikouLx: string;
  coinName: string;
  reward: string;
  arrearsLx: string;
  rateAddVal: string;
  outUserName: string;
  inUserName: string;
  investMark: boolean;
  isIn: boolean;
  inUserLock: boolean;
}

/**
 * One loan record (reference §7.4, coinrust's `LoanRecord` types). Meanings: `amount` principal
 * lent, `balanceAmount` principal outstanding, `hasRepay` principal repaid, `hasLx` interest paid,
 * `arrearsLx` interest owed, `outUserFees` the venue's share of interest paid and `fwfScale` its
 * rate, `rate` the daily rate, `loanId` the offer, `repayDate` the end of the term, `nextRepayDate`
 * the next hourly charge, `sourceType` 1 isolated / 2 cross, `marketName` "btcusdt" (empty for
 * cross). The interest-free and discount fields (`withoutLx…`, `zheLx`, `dikouLx`, `reward`,
 * `rateAddVal`) have no counterpart here and are 0.
 */
export function loanRecord(v: LoanRecordView): LoanRecordWire {
  const l = v.loan;
  const amt = (u: Units): string => formatUnits(u, v.coin.unitDecimal);
  const borrower = l.borrower;
  return {
    createTime: l.createdMs,
    tstatus: l.status,
    withoutLxDays: 0,
    id: l.id,
    fundType: v.coin.fundsType,
    outUserId: v.lenderUserId,
    inUserId: borrower.kind === 'system' ? 0 : borrower.userId,
    repayDate: l.termEndMs,
    sourceType: borrower.kind === 'cross' ? 2 : 1,
    status: l.status,
    balanceWithoutLxDays: 0,
    riskManage: 0,
    rateForm: 1,
    loanId: l.offerId,
    nextRepayDate: l.closedMs === 0 ? l.nextHourMs : 0,
    statusShow: LOAN_STATUS_SHOW[l.status],
    freezId: '',
    withoutLxAmount: amt(0),
    hasRepay: amt(l.amount - l.principal),
    amount: amt(l.amount),
    fwfScale: formatUnitsTrim(v.venueSharePpm, 6),
    rate: formatRateFraction(l.dailyRatePpm),
    marketName: borrower.kind === 'isolated' ? leverKey(borrower.market) : '',
    hasLx: amt(l.interestPaid),
    balanceAmount: amt(l.principal),
    zheLx: amt(0),
    outUserFees: amt(l.venueShare),
    dikouLx: amt(0),
    coinName: v.coin.name.toUpperCase(),
    reward: amt(0),
    arrearsLx: amt(l.interestOwed),
    rateAddVal: '0',
    outUserName: v.lenderName,
    inUserName: v.borrowerName,
    investMark: l.investMark,
    isIn: v.viewerIsBorrower,
    inUserLock: v.borrowerLocked,
  };
}

// ---------------------------------------------------------------------------------------------
// getRepayments, getCrossRepayRecords

export interface RepaymentWire {
  benJin: string;
  id: number;
  statusShow: string;
  status: number;
  liXi: string;
  actureDate: number;
}

/**
 * One getRepayments item (reference §7.5): `benJin` principal and `liXi` interest paid (the
 * venue's share included), `actureDate` when; `status` the record's status after the payment.
 */
export function repaymentItem(r: RepaymentRecord, statusAfter: LoanStatus, coin: CoinView): RepaymentWire {
  return {
    benJin: formatUnits(r.principal, coin.unitDecimal),
    id: r.id,
    statusShow: LOAN_STATUS_SHOW[statusAfter],
    status: statusAfter,
    liXi: formatUnits(r.interest, coin.unitDecimal),
    actureDate: r.timeMs,
  };
}

/** getCrossRepayRecords (response unknown in the reference): getRepayments' item plus the record and coin. */
export interface CrossRepaymentWire extends RepaymentWire {
  loanRecordId: number;
  coinName: string;
}

export function crossRepaymentItem(
  r: RepaymentRecord,
  statusAfter: LoanStatus,
  coin: CoinView,
): CrossRepaymentWire {
  return {
    ...repaymentItem(r, statusAfter, coin),
    loanRecordId: r.loanId,
    coinName: coin.name.toUpperCase(),
  };
}
