/**
 * @module withdraw — the signed withdrawal requests (moneyPerm): withdraw, and cancelWithdraw (a
 * user's cancel before sending, named after the real API's legacy `<coin>_cancelwithdraw`).
 * Both need the fund password, checked here with scrypt (never in the engine). Each attempt is
 * journaled before its check (RecordFundPasswordFailure `begin`), so that no more than five are
 * ever checked within 24 hours, however many arrive at once; a wrong one then counts as a failure
 * and the fifth within 24 hours locks withdrawals for 24 hours.
 */
import { FUND_PASSWORD_MAX_FAILURES, FUND_PASSWORD_WINDOW_MS } from '../../../domain/chains.ts';
import { isPendingWithdrawal, type WithdrawalState } from '../../../domain/chains.ts';
import type { RequestWithdrawal } from '../../../domain/commands.ts';
import { verifyFundPassword } from '../../auth/fund-password.ts';
import type { Args } from '../../edge/endpoint.ts';
import {
  ANY_CASE_COIN,
  choice,
  optional,
  plainInteger,
  readCoinUnits,
  TEXT,
  withDefault,
} from '../../edge/readers.ts';
import { quoted, refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { signedEndpoint, submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';

/** The real API's text for a locked fund password (zb-api-facts §3). */
const LOCKED_TEXT = '您的资金安全密码已经被锁定，请等待24个小时后会自动解锁。';
/** Longest receiveAddr read. */
const MAX_ADDRESS_LENGTH = 200;

/**
 * Checks the fund password. The attempt is journaled first (`begin`): while locked, or with five
 * attempts in 24 hours already wrong or being checked, it is FUND_PASSWORD_LOCKED (1004) without
 * the password being looked at, so a right password answers exactly as a wrong one there. Then
 * the hash is checked and the attempt ends journaled as `right` (it does not count) or `wrong`:
 * FUND_PASSWORD_WRONG (1005), or 1004 if it was the one that locked.
 */
export async function checkFundPassword(ctx: SignedContext, password: string): Promise<void> {
  const { engine, userId } = ctx;
  if (engine.funds.fundPassword(userId) === undefined)
    refuse('FUND_PASSWORD_WRONG', 'no fund password is set for this account');
  const locked = (): never => {
    const until = engine.funds.fundPassword(userId)?.lockedUntil ?? 0;
    return refuse(
      'FUND_PASSWORD_LOCKED',
      until > ctx.venue.now()
        ? `${LOCKED_TEXT} (locked until ${new Date(until).toISOString()})`
        : `${LOCKED_TEXT} (${FUND_PASSWORD_MAX_FAILURES} attempts within 24 hours are wrong or still being checked)`,
    );
  };
  // What the engine would refuse is answered without journaling a refusal (an attacker's flood
  // while locked writes nothing); the engine's own check below still decides under concurrency.
  const now = ctx.venue.now();
  const current = engine.funds.fundPassword(userId);
  const since = now - FUND_PASSWORD_WINDOW_MS;
  const counted = (times: readonly number[] = []): number => times.filter((t) => t > since).length;
  if (
    current !== undefined &&
    (current.lockedUntil > now ||
      counted(current.failures) + counted(current.pending) >= FUND_PASSWORD_MAX_FAILURES)
  ) {
    locked();
  }
  const begun = await ctx.venue.submit({ type: 'RecordFundPasswordFailure', userId, attempt: 'begin' });
  if (begun.result === 'FUND_PASSWORD_LOCKED') locked();
  if (begun.result !== 'OK') refuse(begun.result, begun.message);
  // The hash as it is now: the operator may have set a new password meanwhile.
  const stored = engine.funds.fundPassword(userId);
  const right = stored !== undefined && (await verifyFundPassword(password, stored.hash));
  await submitOrRefuse(ctx, {
    type: 'RecordFundPasswordFailure',
    userId,
    attempt: right ? 'right' : 'wrong',
  });
  if (right) return;
  const after = engine.funds.fundPassword(userId);
  if (after !== undefined && after.lockedUntil > ctx.venue.now()) locked();
  const left = FUND_PASSWORD_MAX_FAILURES - (after?.failures.length ?? 0) - (after?.pending.length ?? 0);
  refuse('FUND_PASSWORD_WRONG', `fund password wrong: ${left} more wrong within 24 hours lock withdrawals`);
}

/**
 * `withdraw`: currency, amount, fees (the chain's fee exactly; 0 allowed for an internal
 * transfer), receiveAddr (a verified address of the user's book, `<account>_<memo>` on memo
 * chains), safePwd, [itransfer 0|1, default 0]. The request is checked whole against the state
 * first, so that one refused anyway costs no password attempt; then the password; then it is
 * journaled and applied. Reply `{"code":1000,"message":"success","id":"<withdrawal id>"}`.
 */
const WITHDRAW_PARAMS = {
  currency: ANY_CASE_COIN,
  amount: TEXT,
  fees: TEXT,
  receiveAddr: TEXT,
  safePwd: TEXT,
  itransfer: withDefault(choice(['0', '1']), '0'),
};

async function withdraw(ctx: SignedContext, args: Args<typeof WITHDRAW_PARAMS>): Promise<ApiReply> {
  const { engine, userId } = ctx;
  const { currency: coin, receiveAddr: address, safePwd: password } = args;
  const amount = readCoinUnits('amount', args.amount, coin, 'INVALID_AMOUNT', true);
  const fee = readCoinUnits('fees', args.fees, coin, 'INVALID_PARAMETER', false);
  if (address.length > MAX_ADDRESS_LENGTH)
    refuse('INVALID_PARAMETER', `receiveAddr is longer than ${MAX_ADDRESS_LENGTH} characters`);
  const itransfer = args.itransfer === '1';
  const command: RequestWithdrawal = {
    type: 'RequestWithdrawal',
    userId,
    coin: coin.name,
    address,
    amount,
    fee,
    itransfer,
  };
  const refusal = engine.funds.checkWithdrawal(command, ctx.venue.now());
  if (refusal !== undefined) refuse(refusal.result, refusal.message);
  await checkFundPassword(ctx, password);
  const result = await submitOrRefuse(ctx, command);
  return { json: successBody({ id: result.withdrawalId }) };
}

const CANCELLABLE: readonly WithdrawalState[] = ['submitted', 'approved'];

/**
 * `cancelWithdraw`: downloadId (the withdrawal id), safePwd, [currency]. Cancels the user's
 * withdrawal while it is not being sent yet; its funds come back. Reply `{"code":1000,"message":"success"}`.
 */
const CANCEL_WITHDRAW_PARAMS = { downloadId: TEXT, safePwd: TEXT, currency: optional(ANY_CASE_COIN) };

async function cancelWithdraw(
  ctx: SignedContext,
  args: Args<typeof CANCEL_WITHDRAW_PARAMS>,
): Promise<ApiReply> {
  const { engine, userId } = ctx;
  const { currency: coin, downloadId: id, safePwd: password } = args;
  const w = plainInteger(id) === undefined ? undefined : engine.funds.withdrawal(id);
  if (w === undefined || w.userId !== userId)
    refuse('UNKNOWN_REFERENCE', `no withdrawal ${quoted(id)} of this account`);
  if (coin !== undefined && coin.name !== w.coin)
    refuse('INVALID_PARAMETER', `withdrawal ${id} is of ${w.coin}, not ${coin.name}`);
  if (!CANCELLABLE.includes(w.state)) {
    refuse(
      'INVALID_STATE',
      isPendingWithdrawal(w.state)
        ? `withdrawal ${id} is ${w.state}: it can no longer be cancelled`
        : `withdrawal ${id} has ended (${w.state})`,
    );
  }
  await checkFundPassword(ctx, password);
  await submitOrRefuse(ctx, { type: 'CancelWithdrawal', withdrawalId: id, userId });
  return { json: successBody() };
}

export const WITHDRAW_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'withdraw',
    permission: 'money',
    params: WITHDRAW_PARAMS,
    handler: withdraw,
    webSocket: true,
  }),
  signedEndpoint({
    method: 'cancelWithdraw',
    webSocket: true,
    permission: 'money',
    params: CANCEL_WITHDRAW_PARAMS,
    handler: cancelWithdraw,
  }),
];
