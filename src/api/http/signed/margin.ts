/**
 * @module margin — the signed margin endpoints that change state (issue 14; leverPerm guards every
 * one): transfers between spot and the isolated or cross account, lending offers, borrowing,
 * repayment and the accounts' express / auto-repay defaults. Each reads its parameters
 * (margin-params.ts: a bad one is refused before anything is journaled), checks the fund password
 * where the account has one and the call carries money out of the lender's reach (the borrows, as
 * ccxt sends `safePwd`), then submits one engine command and answers once it is applied.
 * Answers: `{"code":1000,"message":"success"}` (the reference's for borrow and the transfers),
 * plus `id` for `loan` (as `order` answers). The engine refuses what the state decides (limits,
 * what is owed, whose record) with the same codes, changing nothing (docs/margin.md).
 */
import { refuseClosedLoan } from './margin-views.ts';
import {
  CROSS_ACCOUNT,
  ISOLATED_ACCOUNT,
  type Command,
  type MarginAcctType,
} from '../../../domain/commands.ts';
import type { ApiReply } from '../types.ts';
import {
  coinOfMarket,
  flagParam,
  idParam,
  lendingSettingsOf,
  loanAmountParam,
  marginAmountParam,
  marginCoinParam,
  marginMarketParam,
  optionalRateParam,
  optionalTermParam,
  rateParam,
  repayTypeParam,
  termParam,
} from './margin-params.ts';
import { submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { choiceParam, optional, refuse } from './wire.ts';
import { checkFundPassword } from './withdraw.ts';

const SUCCESS: ApiReply = { json: { code: 1000, message: 'success' } };

async function submit(ctx: SignedContext, command: Command): Promise<ApiReply> {
  await submitOrRefuse(ctx, command);
  return SUCCESS;
}

/**
 * The fund password, where the user has set one: `safePwd` is then required and checked as for a
 * withdrawal (five wrong within 24 hours lock it). Without a fund password nothing is asked.
 */
async function fundPasswordWhereSet(ctx: SignedContext): Promise<void> {
  if (ctx.engine.funds.fundPassword(ctx.userId) === undefined) return;
  // A frozen account's borrow is refused (by the engine too) before a password attempt is spent.
  if (ctx.engine.userRecord(ctx.userId)?.status === 'frozen') refuse('ACCOUNT_FROZEN');
  const password = optional(ctx.request, 'safePwd');
  if (password === undefined) {
    refuse('FUND_PASSWORD_WRONG', 'safePwd is required: this account has a fund password');
  }
  await checkFundPassword(ctx, password);
}

/** The isolated account a call names: its market (`marketName`) and a coin of that market. */
function isolatedTarget(ctx: SignedContext): { market: string; coin: ReturnType<typeof marginCoinParam> } {
  const market = marginMarketParam(ctx.engine, ctx.request);
  const coin = marginCoinParam(ctx.engine, ctx.request);
  coinOfMarket(coin, market);
  return { market: market.name, coin };
}

/** `transferInLever` / `transferOutLever`: coin, marketName, amount. */
function leverTransfer(direction: 'in' | 'out') {
  return async (ctx: SignedContext): Promise<ApiReply> => {
    const { market, coin } = isolatedTarget(ctx);
    const amount = marginAmountParam(ctx.request, 'amount', coin);
    return submit(ctx, {
      type: 'MarginTransfer',
      userId: ctx.userId,
      direction,
      acctType: ISOLATED_ACCOUNT,
      market,
      coin: coin.name,
      amount,
    });
  };
}

/** `transferInCross` / `transferOutCross`: coin, amount. */
function crossTransfer(direction: 'in' | 'out') {
  return async (ctx: SignedContext): Promise<ApiReply> => {
    const coin = marginCoinParam(ctx.engine, ctx.request);
    const amount = marginAmountParam(ctx.request, 'amount', coin);
    return submit(ctx, {
      type: 'MarginTransfer',
      userId: ctx.userId,
      direction,
      acctType: CROSS_ACCOUNT,
      market: '',
      coin: coin.name,
      amount,
    });
  };
}

/**
 * `loan`: coin, amount, interestRateOfDay (percent per day), repaymentDay (10/20/30), [isLoop,
 * default 0]. The amount is frozen in the spot account until lent or cancelled.
 * Reply `{"code":1000,"message":"success","id":"<offer id>"}`.
 */
async function loan(ctx: SignedContext): Promise<ApiReply> {
  const { request } = ctx;
  const coin = marginCoinParam(ctx.engine, request);
  const lending = lendingSettingsOf(ctx.engine, coin);
  const amount = loanAmountParam(request, 'amount', coin, lending);
  const dailyRatePpm = rateParam(request, lending);
  const days = termParam(request, lending);
  const loop = flagParam(request, 'isLoop', false);
  const result = await submitOrRefuse(ctx, {
    type: 'PlaceLoanOffer',
    userId: ctx.userId,
    coin: coin.name,
    amount,
    dailyRatePpm,
    days,
    loop,
  });
  return { json: { code: 1000, message: 'success', id: String(result.offerId) } };
}

/** `cancelLoan`: loanId (the offer). */
async function cancelLoan(ctx: SignedContext): Promise<ApiReply> {
  const offerId = idParam(ctx.request, 'loanId');
  return submit(ctx, { type: 'CancelLoanOffer', userId: ctx.userId, offerId });
}

/** `changeLoop`: loanId (the offer), isLoop 1/0. */
async function changeLoop(ctx: SignedContext): Promise<ApiReply> {
  const offerId = idParam(ctx.request, 'loanId');
  const loop = flagParam(ctx.request, 'isLoop');
  return submit(ctx, { type: 'ChangeLoanLoop', userId: ctx.userId, offerId, loop });
}

/** `changeInvestMark`: loanRecordId, investMark 1/0 (the lender's mark on one loan record). */
async function changeInvestMark(ctx: SignedContext): Promise<ApiReply> {
  const loanId = idParam(ctx.request, 'loanRecordId');
  const investMark = flagParam(ctx.request, 'investMark');
  await refuseClosedLoan(ctx, loanId, 'lender');
  return submit(ctx, { type: 'ChangeInvestMark', userId: ctx.userId, loanId, investMark });
}

/**
 * `borrow` / `autoBorrow` (isolated: marketName, coin) and `doCrossLoan` (cross: coin): amount,
 * [interestRateOfDay: only offers at or below it], [repaymentDay: only offers of that term],
 * [isLoop: roll over at the end of the term, default 0], [safePwd where a fund password is set].
 * ccxt's borrowMargin sends coin, amount, safePwd (and marketName for isolated).
 */
function borrow(acctType: MarginAcctType) {
  return async (ctx: SignedContext): Promise<ApiReply> => {
    const { request } = ctx;
    const target =
      acctType === ISOLATED_ACCOUNT
        ? isolatedTarget(ctx)
        : { market: '', coin: marginCoinParam(ctx.engine, request) };
    const lending = lendingSettingsOf(ctx.engine, target.coin);
    const amount = loanAmountParam(request, 'amount', target.coin, lending);
    const maxDailyRatePpm = optionalRateParam(request, lending);
    const days = optionalTermParam(request, lending);
    const rollOver = flagParam(request, 'isLoop', false);
    await fundPasswordWhereSet(ctx);
    return submit(ctx, {
      type: 'Borrow',
      userId: ctx.userId,
      acctType,
      market: target.market,
      coin: target.coin.name,
      amount,
      ...(maxDailyRatePpm === undefined ? {} : { maxDailyRatePpm }),
      ...(days === undefined ? {} : { days }),
      rollOver,
    });
  };
}

/**
 * `repay`: loanRecordId, [repayType 0 all / 1 part; default: part when repayAmount is given],
 * repayAmount (for a part) in the record's coin. Interest first, then principal.
 */
async function repay(ctx: SignedContext): Promise<ApiReply> {
  const { request, engine } = ctx;
  const loanId = idParam(request, 'loanRecordId');
  const how = repayTypeParam(request);
  await refuseClosedLoan(ctx, loanId, 'borrower');
  if (how === 'all') return submit(ctx, { type: 'RepayLoan', userId: ctx.userId, loanId, amount: 'all' });
  const coinName = loanCoin(ctx, loanId);
  const coin = engine.coin(coinName) ?? refuse('LOAN_NOT_FOUND', `no loan record ${loanId} of this account`);
  const amount = marginAmountParam(request, 'repayAmount', coin);
  return submit(ctx, { type: 'RepayLoan', userId: ctx.userId, loanId, amount });
}

/** The coin of the caller's loan record (LOAN_NOT_FOUND when it is not theirs). */
function loanCoin(ctx: SignedContext, loanId: number): string {
  const record = ctx.engine.margin.loan(loanId);
  if (record === undefined || record.borrower.kind === 'system' || record.borrower.userId !== ctx.userId) {
    return refuse('LOAN_NOT_FOUND', `no loan record ${loanId} of this account`);
  }
  return record.coin;
}

/**
 * `doAllRepay` (isolated: marketName, coin) and `doCrossRepay` (cross: coin): [repayAmount;
 * absent: all that the account owes in the coin]. Interest of every record first, then principal,
 * dearest first.
 */
function repayAll(acctType: MarginAcctType) {
  return async (ctx: SignedContext): Promise<ApiReply> => {
    const target =
      acctType === ISOLATED_ACCOUNT
        ? isolatedTarget(ctx)
        : { market: '', coin: marginCoinParam(ctx.engine, ctx.request) };
    const amount =
      optional(ctx.request, 'repayAmount') === undefined
        ? 'all'
        : marginAmountParam(ctx.request, 'repayAmount', target.coin);
    return submit(ctx, {
      type: 'RepayAll',
      userId: ctx.userId,
      acctType,
      market: target.market,
      coin: target.coin.name,
      amount,
    });
  };
}

/**
 * `setExpressState` / `setRepayState` (the reference knows only their names; designed here):
 * [acctType 1 isolated (default) / 2 cross], marketName (isolated), state 1/0 (`true`/`false`).
 * Express on: the account's margin orders borrow what they need beyond its balance, within its
 * limit (as an order's `enableExpress`). Auto-repay on: what a fill brings in repays the account's
 * debt in that coin.
 */
function preference(field: 'express' | 'autoRepay') {
  return async (ctx: SignedContext): Promise<ApiReply> => {
    const acctType =
      choiceParam(ctx.request, 'acctType', ['1', '2'], '1') === '2' ? CROSS_ACCOUNT : ISOLATED_ACCOUNT;
    const market = acctType === ISOLATED_ACCOUNT ? marginMarketParam(ctx.engine, ctx.request).name : '';
    const state = flagParam(ctx.request, 'state');
    return submit(ctx, {
      type: 'SetMarginPreferences',
      userId: ctx.userId,
      acctType,
      market,
      [field]: state,
    });
  };
}

export const MARGIN_ENDPOINTS: readonly SignedEndpoint[] = [
  { method: 'transferInLever', permission: 'lever', handler: leverTransfer('in') },
  { method: 'transferOutLever', permission: 'lever', handler: leverTransfer('out') },
  { method: 'transferInCross', permission: 'lever', handler: crossTransfer('in') },
  { method: 'transferOutCross', permission: 'lever', handler: crossTransfer('out') },
  { method: 'loan', permission: 'lever', handler: loan },
  { method: 'cancelLoan', permission: 'lever', handler: cancelLoan },
  { method: 'changeLoop', permission: 'lever', handler: changeLoop },
  { method: 'changeInvestMark', permission: 'lever', handler: changeInvestMark },
  { method: 'borrow', permission: 'lever', handler: borrow(ISOLATED_ACCOUNT) },
  { method: 'autoBorrow', permission: 'lever', handler: borrow(ISOLATED_ACCOUNT) },
  { method: 'doCrossLoan', permission: 'lever', handler: borrow(CROSS_ACCOUNT) },
  { method: 'repay', permission: 'lever', handler: repay },
  { method: 'doAllRepay', permission: 'lever', handler: repayAll(ISOLATED_ACCOUNT) },
  { method: 'doCrossRepay', permission: 'lever', handler: repayAll(CROSS_ACCOUNT) },
  { method: 'setExpressState', permission: 'lever', handler: preference('express') },
  { method: 'setRepayState', permission: 'lever', handler: preference('autoRepay') },
];
