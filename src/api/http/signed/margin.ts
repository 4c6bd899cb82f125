/**
 * @module margin — the signed margin endpoints that change state (issue 14; leverPerm guards every
 * one): transfers between spot and the isolated or cross account, lending offers, borrowing,
 * repayment and the accounts' express / auto-repay defaults. Each declares its parameters
 * (edge/readers.ts, with margin-params.ts for the rules that depend on the coin: a bad one is
 * refused before anything is journaled), checks the fund password
 * where the account has one and the call carries money out of the lender's reach (the borrows, as
 * ccxt sends `safePwd`), then submits one engine command and answers once it is applied.
 * Answers: `{"code":1000,"message":"success"}` (the reference's for borrow and the transfers),
 * plus `id` for `loan` (as `order` answers). The engine refuses what the state decides (limits,
 * what is owed, whose record) with the same codes, changing nothing (docs/margin.md).
 */
import {
  CROSS_ACCOUNT,
  ISOLATED_ACCOUNT,
  type Command,
  type MarginAcctType,
} from '../../../domain/commands.ts';
import type { CoinSpec, MarketSpec } from '../../../domain/specs.ts';
import type { Args, Params } from '../../edge/endpoint.ts';
import {
  ANY_CASE_COIN,
  choice,
  FLAG,
  ID,
  MARGIN_MARKET,
  optional,
  TEXT,
  withDefault,
} from '../../edge/readers.ts';
import { refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import {
  coinOfMarket,
  lendingSettingsOf,
  loanAmount,
  marginAmount,
  rateOf,
  repayHow,
  termOf,
} from './margin-params.ts';
import { refuseClosedLoan } from './margin-views.ts';
import { signedEndpoint, submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { checkFundPassword } from './withdraw.ts';

const SUCCESS: ApiReply = { json: successBody() };

async function submit(ctx: SignedContext, command: Command): Promise<ApiReply> {
  await submitOrRefuse(ctx, command);
  return SUCCESS;
}

/**
 * The fund password, where the user has set one: `safePwd` is then required and checked as for a
 * withdrawal (five wrong within 24 hours lock it). Without a fund password nothing is asked.
 */
async function fundPasswordWhereSet(ctx: SignedContext, password: string | undefined): Promise<void> {
  if (ctx.engine.funds.fundPassword(ctx.userId) === undefined) return;
  // A frozen account's borrow is refused (by the engine too) before a password attempt is spent.
  if (ctx.engine.userRecord(ctx.userId)?.status === 'frozen') refuse('ACCOUNT_FROZEN');
  if (password === undefined) {
    refuse('FUND_PASSWORD_WRONG', 'safePwd is required: this account has a fund password');
  }
  await checkFundPassword(ctx, password);
}

/** The isolated account a call names: its market (`marketName`) and a coin of that market. */
function isolatedTarget(args: { marketName: MarketSpec; coin: CoinSpec }): {
  market: string;
  coin: CoinSpec;
} {
  coinOfMarket(args.coin, args.marketName);
  return { market: args.marketName.name, coin: args.coin };
}

/** The account a call names: isolated (marketName and a coin of it) or cross (a coin). */
function targetOf(args: { marketName?: MarketSpec; coin: CoinSpec }): { market: string; coin: CoinSpec } {
  const { marketName } = args;
  return marketName === undefined
    ? { market: '', coin: args.coin }
    : isolatedTarget({ marketName, coin: args.coin });
}

// Isolated calls name the market first (as ccxt's do), then the coin.
const ISOLATED = { marketName: MARGIN_MARKET, coin: ANY_CASE_COIN } as const;
const CROSS = { coin: ANY_CASE_COIN } as const;
const LEVER_TRANSFER_PARAMS = { ...ISOLATED, amount: TEXT };
const CROSS_TRANSFER_PARAMS = { ...CROSS, amount: TEXT };

/** `transferInLever` / `transferOutLever`: coin, marketName, amount. */
function leverTransfer(direction: 'in' | 'out') {
  return async (ctx: SignedContext, args: Args<typeof LEVER_TRANSFER_PARAMS>): Promise<ApiReply> => {
    const { market, coin } = isolatedTarget(args);
    const amount = marginAmount('amount', args.amount, coin);
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
  return async (ctx: SignedContext, args: Args<typeof CROSS_TRANSFER_PARAMS>): Promise<ApiReply> => {
    const coin = args.coin;
    const amount = marginAmount('amount', args.amount, coin);
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
const LOAN_PARAMS = {
  coin: ANY_CASE_COIN,
  amount: TEXT,
  interestRateOfDay: TEXT,
  repaymentDay: TEXT,
  isLoop: withDefault(FLAG, false),
};

async function loan(ctx: SignedContext, args: Args<typeof LOAN_PARAMS>): Promise<ApiReply> {
  const { coin, isLoop: loop } = args;
  const lending = lendingSettingsOf(ctx.engine, coin);
  const amount = loanAmount('amount', args.amount, coin, lending);
  const dailyRatePpm = rateOf(args.interestRateOfDay, lending);
  const days = termOf(args.repaymentDay, lending);
  const result = await submitOrRefuse(ctx, {
    type: 'PlaceLoanOffer',
    userId: ctx.userId,
    coin: coin.name,
    amount,
    dailyRatePpm,
    days,
    loop,
  });
  return { json: successBody({ id: String(result.offerId) }) };
}

/** `cancelLoan`: loanId (the offer). */
async function cancelLoan(ctx: SignedContext, { loanId: offerId }: { loanId: number }): Promise<ApiReply> {
  return submit(ctx, { type: 'CancelLoanOffer', userId: ctx.userId, offerId });
}

/** `changeLoop`: loanId (the offer), isLoop 1/0. */
async function changeLoop(ctx: SignedContext, args: { loanId: number; isLoop: boolean }): Promise<ApiReply> {
  const { loanId: offerId, isLoop: loop } = args;
  return submit(ctx, { type: 'ChangeLoanLoop', userId: ctx.userId, offerId, loop });
}

/** `changeInvestMark`: loanRecordId, investMark 1/0 (the lender's mark on one loan record). */
async function changeInvestMark(
  ctx: SignedContext,
  args: { loanRecordId: number; investMark: boolean },
): Promise<ApiReply> {
  const { loanRecordId: loanId, investMark } = args;
  await refuseClosedLoan(ctx, loanId, 'lender');
  return submit(ctx, { type: 'ChangeInvestMark', userId: ctx.userId, loanId, investMark });
}

/**
 * `borrow` / `autoBorrow` (isolated: marketName, coin) and `doCrossLoan` (cross: coin): amount,
 * [interestRateOfDay: only offers at or below it], [repaymentDay: only offers of that term],
 * [isLoop: roll over at the end of the term, default 0], [safePwd where a fund password is set].
 * ccxt's borrowMargin sends coin, amount, safePwd (and marketName for isolated).
 */
const BORROW_TERMS = {
  amount: TEXT,
  interestRateOfDay: optional(TEXT),
  repaymentDay: optional(TEXT),
  isLoop: withDefault(FLAG, false),
  safePwd: optional(TEXT),
};
const BORROW_PARAMS = { ...ISOLATED, ...BORROW_TERMS };
const CROSS_BORROW_PARAMS = { ...CROSS, ...BORROW_TERMS };

function borrow(acctType: MarginAcctType) {
  return async (
    ctx: SignedContext,
    args: Args<typeof CROSS_BORROW_PARAMS> & { marketName?: MarketSpec },
  ): Promise<ApiReply> => {
    const target = targetOf(args);
    const lending = lendingSettingsOf(ctx.engine, target.coin);
    const amount = loanAmount('amount', args.amount, target.coin, lending);
    const rate = args.interestRateOfDay;
    const maxDailyRatePpm = rate === undefined ? undefined : rateOf(rate, lending);
    const days = args.repaymentDay === undefined ? undefined : termOf(args.repaymentDay, lending);
    const rollOver = args.isLoop;
    await fundPasswordWhereSet(ctx, args.safePwd);
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
const REPAY_PARAMS = {
  loanRecordId: ID,
  repayType: optional(choice(['0', '1'])),
  repayAmount: optional(TEXT),
};

async function repay(ctx: SignedContext, args: Args<typeof REPAY_PARAMS>): Promise<ApiReply> {
  const { engine } = ctx;
  const loanId = args.loanRecordId;
  const how = repayHow(args.repayType, args.repayAmount);
  await refuseClosedLoan(ctx, loanId, 'borrower');
  if (how === 'all') return submit(ctx, { type: 'RepayLoan', userId: ctx.userId, loanId, amount: 'all' });
  const coinName = loanCoin(ctx, loanId);
  const coin = engine.coin(coinName) ?? refuse('LOAN_NOT_FOUND', `no loan record ${loanId} of this account`);
  const amount = marginAmount('repayAmount', args.repayAmount, coin);
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
const REPAY_ALL_PARAMS = { ...ISOLATED, repayAmount: optional(TEXT) };
const CROSS_REPAY_PARAMS = { ...CROSS, repayAmount: optional(TEXT) };

function repayAll(acctType: MarginAcctType) {
  return async (
    ctx: SignedContext,
    args: Args<typeof CROSS_REPAY_PARAMS> & { marketName?: MarketSpec },
  ): Promise<ApiReply> => {
    const target = targetOf(args);
    const amount =
      args.repayAmount === undefined ? 'all' : marginAmount('repayAmount', args.repayAmount, target.coin);
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
const PREFERENCE_PARAMS = {
  acctType: withDefault(choice(['1', '2']), '1'),
  // Required for an isolated account (checked below); a cross account has none.
  marketName: optional(MARGIN_MARKET),
  state: FLAG,
};

function preference(field: 'express' | 'autoRepay') {
  return async (ctx: SignedContext, args: Args<typeof PREFERENCE_PARAMS>): Promise<ApiReply> => {
    const acctType = args.acctType === '2' ? CROSS_ACCOUNT : ISOLATED_ACCOUNT;
    const { marketName, state } = args;
    if (acctType === ISOLATED_ACCOUNT && marketName === undefined)
      refuse('INVALID_PARAMETER', 'marketName is required');
    const market = acctType === ISOLATED_ACCOUNT ? (marketName as MarketSpec).name : '';
    return submit(ctx, {
      type: 'SetMarginPreferences',
      userId: ctx.userId,
      acctType,
      market,
      [field]: state,
    });
  };
}

const lever = <P extends Params>(method: string, params: P, handler: SignedEndpoint<P>['handler']) =>
  signedEndpoint({ method, permission: 'lever', params, handler });

export const MARGIN_ENDPOINTS: readonly SignedEndpoint[] = [
  lever('transferInLever', LEVER_TRANSFER_PARAMS, leverTransfer('in')),
  lever('transferOutLever', LEVER_TRANSFER_PARAMS, leverTransfer('out')),
  lever('transferInCross', CROSS_TRANSFER_PARAMS, crossTransfer('in')),
  lever('transferOutCross', CROSS_TRANSFER_PARAMS, crossTransfer('out')),
  lever('loan', LOAN_PARAMS, loan),
  lever('cancelLoan', { loanId: ID }, cancelLoan),
  lever('changeLoop', { loanId: ID, isLoop: FLAG }, changeLoop),
  lever('changeInvestMark', { loanRecordId: ID, investMark: FLAG }, changeInvestMark),
  lever('borrow', BORROW_PARAMS, borrow(ISOLATED_ACCOUNT)),
  lever('autoBorrow', BORROW_PARAMS, borrow(ISOLATED_ACCOUNT)),
  lever('doCrossLoan', CROSS_BORROW_PARAMS, borrow(CROSS_ACCOUNT)),
  lever('repay', REPAY_PARAMS, repay),
  lever('doAllRepay', REPAY_ALL_PARAMS, repayAll(ISOLATED_ACCOUNT)),
  lever('doCrossRepay', CROSS_REPAY_PARAMS, repayAll(CROSS_ACCOUNT)),
  lever('setExpressState', PREFERENCE_PARAMS, preference('express')),
  lever('setRepayState', PREFERENCE_PARAMS, preference('autoRepay')),
];
