/** @module account — the signed account endpoints: getAccountInfo (balances and the key's permissions) and getSpotBills (balance changes from history). */
import type { BillType } from '../../../domain/events.ts';
import { formatUnits } from '../../../domain/money.ts';
import type { CoinSpec } from '../../../domain/specs.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import type { BillRow } from '../../../store/history-store.ts';
import type { Args } from '../../edge/endpoint.ts';
import { choice, COIN, DATE_TIME, formatDateTime, optional, pageParams } from '../../edge/readers.ts';
import { refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { awaitHistory, signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';

/** getSpotBills page sizes (the spec's range) and its 48-hour split for dataType. */
export const BILLS_MIN_PAGE_SIZE = 10;
export const BILLS_MAX_PAGE_SIZE = 50;
export const BILLS_RECENT_MS = 48 * 3_600_000;

/**
 * `getAccountInfo`: every coin with the user's available and frozen balance (decimal text with
 * the coin's decimals), the user's base info, and the calling key's four permission flags. The
 * reply is bare (no `code`), as the real API's was.
 */
function getAccountInfo(ctx: SignedContext): ApiReply {
  const { engine, userId, key } = ctx;
  const coins = engine.coins().map((coin) => coinBalanceRecord(engine, userId, coin));
  return {
    json: {
      result: {
        coins,
        base: {
          username: engine.userName(userId) ?? '',
          // The fund password (safePwd) is the trade password; no Google authenticator or SMS check (yet).
          trade_password_enabled: engine.funds.fundPassword(userId) !== undefined,
          auth_google_enabled: false,
          auth_mobile_enabled: false,
        },
      },
      assetPerm: key.permissions.asset,
      leverPerm: key.permissions.lever,
      entrustPerm: key.permissions.entrust,
      moneyPerm: key.permissions.money,
      // The real API's flag (zb-api-facts §6.7): whether this key may manage sub-accounts, which
      // only a main user's key granted `subuser` may (a sub-account has none of its own).
      subUserPerm: key.permissions.subUser === true && engine.subAccounts.mainOf(userId) === undefined,
    },
  };
}

/**
 * One coin of getAccountInfo's `coins` (and of the WebSocket asset pushes): the coin's names and
 * decimals, and the user's available and frozen balance as decimal text with the coin's decimals.
 */
export function coinBalanceRecord(
  engine: VenueState,
  userId: number,
  coin: CoinSpec,
): Record<string, unknown> {
  const balance = engine.balance(userId, coin.name) ?? { available: 0, frozen: 0 };
  return {
    key: coin.name,
    enName: coin.enName,
    cnName: coin.cnName,
    showName: coin.showName,
    unitTag: coin.enName,
    unitDecimal: coin.unitDecimal,
    fundstype: coin.fundsType,
    available: formatUnits(balance.available, coin.unitDecimal),
    freez: formatUnits(balance.frozen, coin.unitDecimal),
    isCanRecharge: coin.canDeposit,
    isCanWithdraw: coin.canWithdraw,
    // Whether the coin can be lent and borrowed (margin, issue 14).
    canLoan: engine.margin.lendingSettings(coin.name)?.enabled === true,
  };
}

/** The bill types as the reply's `typeDesc` names them. */
const TYPE_DESC: Readonly<Record<BillType, string>> = {
  deposit: 'deposit',
  withdraw: 'withdrawal',
  withdrawFee: 'withdrawal fee',
  withdrawCancelled: 'withdrawal cancelled',
  withdrawFailed: 'withdrawal failed',
  transferOut: 'internal transfer out',
  transferIn: 'internal transfer in',
  subTransferOut: 'sub-account transfer out',
  subTransferIn: 'sub-account transfer in',
  buy: 'buy',
  sell: 'sell',
  buyFee: 'buy fee',
  sellFee: 'sell fee',
  freeze: 'freeze',
  unfreeze: 'unfreeze',
  toMargin: 'to margin account',
  fromMargin: 'from margin account',
  loanOffer: 'lending offer',
  loanCancel: 'lending offer cancelled',
  borrow: 'borrow',
  repayPrincipal: 'repay principal',
  repayInterest: 'repay interest',
  interestShare: 'interest (venue share)',
  liquidationFee: 'liquidation fee',
  insuranceCover: 'insurance cover',
};

function remarkOf(bill: BillRow): string {
  switch (bill.billType) {
    case 'deposit':
      return `deposit ${bill.ref}`;
    case 'withdraw':
    case 'withdrawFee':
      return `withdrawal ${bill.ref}`;
    // The release of a withdrawal that did not go out: the total is unchanged (change 0).
    case 'withdrawCancelled':
      return `withdrawal ${bill.ref} cancelled: its amount and fee are available again`;
    case 'withdrawFailed':
      return `withdrawal ${bill.ref} failed: its amount and fee are available again`;
    case 'transferOut':
    case 'transferIn':
      return `internal transfer (withdrawal ${bill.ref})`;
    // Sub-accounts (issue 33): the other user of the family, by name.
    case 'subTransferOut':
      return `sub-account transfer to ${bill.ref}`;
    case 'subTransferIn':
      return `sub-account transfer from ${bill.ref}`;
    // Margin (issue 14): the account moved to or from (`isolated:<user>:<market>`, `cross:<user>`),
    // or the lending offer (`offer:<id>`) or loan record (`loan:<id>`) the change belongs to.
    case 'toMargin':
    case 'fromMargin':
      return `margin account ${bill.ref}`;
    case 'loanOffer':
    case 'loanCancel':
    case 'borrow':
    case 'repayPrincipal':
    case 'repayInterest':
    case 'interestShare':
      return bill.ref.replace(':', ' ').replace('offer', 'lending offer').replace('loan ', 'loan record ');
    // Liquidation (issue 15): the record the fee or the insurance's cover belongs to.
    case 'liquidationFee':
    case 'insuranceCover':
      return bill.ref.replace(':', ' ');
    default:
      return `order ${bill.ref}`;
  }
}

/** A bill as the wire shows it; amounts are decimal text with the coin's decimals. */
export function billRecord(bill: BillRow, coin: CoinSpec | undefined): Record<string, unknown> {
  const decimals = coin?.unitDecimal ?? 8;
  const tag = coin?.enName ?? bill.coin.toUpperCase();
  const total = formatUnits(bill.balance, decimals);
  const change = formatUnits(bill.change, decimals);
  return {
    id: bill.id,
    currencyName: bill.coin,
    balance: `${total} ${tag}`,
    total,
    changeAmount: `${bill.change >= 0 ? '+' : ''}${change} ${tag}`,
    date: bill.time,
    showDate: formatDateTime(bill.time),
    remark: remarkOf(bill),
    typeDesc: TYPE_DESC[bill.billType] ?? bill.billType,
  };
}

/**
 * `getSpotBills`: [currency], [startDate], [endDate] (`YYYY-MM-DD HH:MM:SS`, UTC, inclusive),
 * [dataType: 0 the last 48 hours, 1 older than 48 hours; absent: any age], [pageIndex ≥ 1],
 * [pageSize 10 to 50, default 10]. Reply `{"code":1000,"message":"success","result":[bill, ...]}`,
 * newest first; `result` is `[]` when there is nothing.
 */
export const BILLS_WINDOW_PARAMS = {
  startDate: optional(DATE_TIME),
  endDate: optional(DATE_TIME),
  dataType: optional(choice(['0', '1'])),
  ...pageParams(BILLS_MIN_PAGE_SIZE, BILLS_MAX_PAGE_SIZE, BILLS_MIN_PAGE_SIZE),
} as const;

const SPOT_BILLS_PARAMS = { currency: optional(COIN), ...BILLS_WINDOW_PARAMS };

async function getSpotBills(ctx: SignedContext, args: Args<typeof SPOT_BILLS_PARAMS>): Promise<ApiReply> {
  const { engine } = ctx;
  const coin = args.currency;
  const window = billsWindow(ctx, args);
  await awaitHistory(ctx);
  const page = await ctx.venue.history.bills(ctx.userId, { coin: coin?.name, ...window });
  return {
    json: successBody({
      result: page.rows.map((bill) => billRecord(bill, coin ?? engine.coin(bill.coin))),
    }),
  };
}

/**
 * The time window and page of a bills query: [startDate], [endDate] (`YYYY-MM-DD HH:MM:SS`, UTC,
 * inclusive), [dataType: 0 the last 48 hours, 1 older; absent: any age], [pageIndex ≥ 1],
 * [pageSize 10 to 50, default 10]. Shared by getSpotBills and the margin bills.
 */
export function billsWindow(
  ctx: SignedContext,
  args: Args<typeof BILLS_WINDOW_PARAMS>,
): {
  startTime: number | undefined;
  endTime: number | undefined;
  pageIndex: number;
  pageSize: number;
} {
  const { dataType, pageIndex, pageSize } = args;
  let startTime = args.startDate;
  let endTime = args.endDate === undefined ? undefined : args.endDate + 999;
  if (startTime !== undefined && endTime !== undefined && startTime > endTime) {
    refuse(
      'INVALID_PARAMETER',
      `startDate ${formatDateTime(startTime)} must not be after endDate ${formatDateTime(endTime - 999)}`,
    );
  }
  // Bills carry venue time, so "within 48 hours" is measured on it (docs/sandbox.md: a manual clock).
  const split = ctx.venue.now() - BILLS_RECENT_MS;
  if (dataType === '0') startTime = Math.max(startTime ?? split, split);
  if (dataType === '1') endTime = Math.min(endTime ?? split - 1, split - 1);
  return { startTime, endTime, pageIndex, pageSize };
}

export const ACCOUNT_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'getAccountInfo',
    permission: 'asset',
    params: {},
    handler: getAccountInfo,
    webSocket: true,
  }),
  signedEndpoint({
    method: 'getSpotBills',
    permission: 'asset',
    params: SPOT_BILLS_PARAMS,
    handler: getSpotBills,
  }),
];
