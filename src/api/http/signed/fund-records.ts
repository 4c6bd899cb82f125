/**
 * @module fund-records — the signed record endpoints (moneyPerm): getWithdrawRecord and
 * getChargeRecord (deposits), read from the history store, newest first, in the shapes the real
 * API answered (zb-api-facts §6.10, §6.11).
 */
import { DEPOSIT_WIRE_STATUS, WITHDRAWAL_WIRE_STATUS } from '../../../domain/chains.ts';
import { formatUnits, unitsToNumber } from '../../../domain/money.ts';
import type { DepositRow, WithdrawalRow } from '../../../store/history-store.ts';
import type { ApiReply } from '../types.ts';
import type { Args } from '../../edge/endpoint.ts';
import { ANY_CASE_COIN, formatDateTime, optional, pageParams } from '../../edge/readers.ts';
import { awaitHistory, signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { datasReply } from './wire.ts';

/** Records per page: 10 unless asked, at most 100. */
export const RECORDS_DEFAULT_PAGE_SIZE = 10;
export const RECORDS_MAX_PAGE_SIZE = 100;

/** currency (any case, optional), pageIndex (from 1), pageSize (1 to 100, default 10). */
const RECORD_PARAMS = {
  currency: optional(ANY_CASE_COIN),
  ...pageParams(1, RECORDS_MAX_PAGE_SIZE, RECORDS_DEFAULT_PAGE_SIZE),
};

function pageOf(args: Args<typeof RECORD_PARAMS>): {
  coin: string | undefined;
  pageIndex: number;
  pageSize: number;
} {
  return { coin: args.currency?.name, pageIndex: args.pageIndex, pageSize: args.pageSize };
}

/**
 * `getWithdrawRecord`: `datas: {list, pageIndex, pageSize, totalCount, totalPage}`. Each record:
 * `id` (number), `amount`, `fees` (numbers), `status` (0 until in a block, 5 confirmed, 2
 * succeeded, 1 failed, 3 cancelled), `submitTime`, `manageTime` (ms: the latest change),
 * `toAddress`, `merchantOrderNo` (''), `hash`; and, added by Bourse, `currency` (upper case) and
 * `itransfer` (1 for an internal transfer). No `confirmTimes`: ccxt tells withdrawals by it.
 */
async function getWithdrawRecord(ctx: SignedContext, args: Args<typeof RECORD_PARAMS>): Promise<ApiReply> {
  const query = pageOf(args);
  await awaitHistory(ctx);
  const page = await ctx.venue.history.withdrawals(ctx.userId, query);
  return datasReply({
    list: page.rows.map((w) => withdrawalRecord(ctx, w)),
    pageIndex: page.pageIndex,
    pageSize: page.pageSize,
    totalCount: page.total,
    totalPage: Math.ceil(page.total / page.pageSize),
  });
}

function withdrawalRecord(ctx: SignedContext, w: WithdrawalRow): Record<string, unknown> {
  const decimals = ctx.engine.coin(w.coin)?.unitDecimal ?? 8;
  return {
    id: Number(w.withdrawalId),
    amount: unitsToNumber(w.amount, decimals),
    fees: unitsToNumber(w.fee, decimals),
    status: WITHDRAWAL_WIRE_STATUS[w.status],
    submitTime: w.submitTime,
    manageTime: w.manageTime,
    toAddress: w.address,
    merchantOrderNo: '',
    hash: w.txHash,
    currency: w.coin.toUpperCase(),
    itransfer: w.itransfer ? 1 : 0,
  };
}

/**
 * `getChargeRecord`: `datas: {list, pageIndex, pageSize, total}`. Each record: `id` (number),
 * `address` (`<account>_<memo>` on memo chains), `amount` (decimal text), `confirmTimes`,
 * `currency` (upper case), `description`, `hash`, `itransfer` (0/1), `status` (0 confirming, 1
 * failed, 2 credited), `submit_time` (`YYYY-MM-DD HH:MM:SS`, UTC).
 */
async function getChargeRecord(ctx: SignedContext, args: Args<typeof RECORD_PARAMS>): Promise<ApiReply> {
  const query = pageOf(args);
  await awaitHistory(ctx);
  const page = await ctx.venue.history.deposits(ctx.userId, query);
  return datasReply({
    list: page.rows.map((d) => depositRecord(ctx, d)),
    pageIndex: page.pageIndex,
    pageSize: page.pageSize,
    total: page.total,
  });
}

function depositRecord(ctx: SignedContext, d: DepositRow): Record<string, unknown> {
  return {
    id: d.id,
    address: d.address,
    amount: formatUnits(d.amount, ctx.engine.coin(d.coin)?.unitDecimal ?? 8),
    confirmTimes: d.confirmations,
    currency: d.coin.toUpperCase(),
    description: describeDeposit(ctx, d),
    hash: d.txHash,
    itransfer: d.itransfer ? 1 : 0,
    status: DEPOSIT_WIRE_STATUS[d.status],
    submit_time: formatDateTime(d.time),
  };
}

function describeDeposit(ctx: SignedContext, d: DepositRow): string {
  if (d.status === 'failed') return `Failed: ${d.note}`;
  if (d.status === 'confirming') {
    const required = ctx.engine.funds.chain(d.coin, d.chain)?.confirmations ?? 0;
    return `Confirming (${d.confirmations}/${required})`;
  }
  if (d.itransfer) return 'Internal transfer';
  return d.chain === '' ? 'Operator credit' : 'Successfully Confirm';
}

export const FUND_RECORD_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'getWithdrawRecord',
    webSocket: true,
    permission: 'money',
    params: RECORD_PARAMS,
    handler: getWithdrawRecord,
  }),
  signedEndpoint({
    method: 'getChargeRecord',
    permission: 'money',
    params: RECORD_PARAMS,
    handler: getChargeRecord,
  }),
];
