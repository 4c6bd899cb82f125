/**
 * @module sub-accounts — the signed sub-account endpoints (zb-api-facts §9; issue 33): addSubUser,
 * getSubUserList, doTransferFunds, createSubUserKey. Each needs a main user's key granted
 * `subuser` (getAccountInfo's subUserPerm). The rules are the engine's (src/engine/sub-accounts.ts);
 * this reads the parameters, hashes the sub-account's password and issues keys.
 */
import type { KeyPermissions } from '../../../domain/commands.ts';
import { parseDecimal } from '../../../domain/money.ts';
import { echo } from '../../auth/authenticate.ts';
import { FUND_PASSWORD, hashFundPassword } from '../../auth/fund-password.ts';
import { issueSealedKey } from '../../auth/secret-sealing.ts';
import type { ApiReply } from '../types.ts';
import { flagParam } from './margin-params.ts';
import { submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { datasReply, fundsCoinParam, optional, refuse, required } from './wire.ts';

/** The caller must be a main user: a sub-account manages no sub-accounts (INVALID_STATE). */
function requireMain(ctx: SignedContext): void {
  if (ctx.engine.subAccounts.mainOf(ctx.userId) !== undefined)
    refuse('INVALID_STATE', 'a sub-account cannot manage sub-accounts: use its main user');
}

/**
 * A user of the caller's family named by `name`: the caller itself or one of its sub-accounts.
 * Any other name, known or not, is the same USER_NOT_FOUND, so nobody learns whose a name is.
 */
function familyMember(ctx: SignedContext, name: string, subOnly: boolean): number {
  const text = required(ctx.request, name);
  const userId = ctx.engine.userId(text);
  const isSelf = userId === ctx.userId && !subOnly;
  if (userId === undefined || !(isSelf || ctx.engine.subAccounts.mainOf(userId) === ctx.userId)) {
    refuse(
      'USER_NOT_FOUND',
      `${name}: ${echo(text)} is not ${subOnly ? '' : 'this user or '}one of this user's sub-accounts`,
    );
  }
  return userId;
}

/**
 * `addSubUser`: subUserName (a user name: 1–64 letters, digits or `. _ @ -`, unique regardless of
 * case), password (the sub-account's fund password, 6–64 printable ASCII), [memo]. Reply
 * `{"code":1000,"message":"success","userName":"<name>"}`. A taken name is refused before the
 * password is hashed.
 */
async function addSubUser(ctx: SignedContext): Promise<ApiReply> {
  requireMain(ctx);
  const name = required(ctx.request, 'subUserName');
  const password = required(ctx.request, 'password');
  const memo = optional(ctx.request, 'memo') ?? '';
  if (!FUND_PASSWORD.test(password))
    refuse('INVALID_PARAMETER', 'password must be 6 to 64 printable ASCII characters');
  if (ctx.engine.userId(name) !== undefined)
    refuse('INVALID_PARAMETER', `subUserName ${echo(name)} is taken (names are unique regardless of case)`);
  const passwordHash = await hashFundPassword(password);
  await submitOrRefuse(ctx, { type: 'AddSubUser', mainUserId: ctx.userId, name, memo, passwordHash });
  return { json: { code: 1000, message: 'success', userName: name } };
}

/**
 * `getSubUserList`: no parameters. Reply `{"code":1000,"message":{"des":"success","isSuc":true,
 * "datas":[{"userName","memo","created":<ms>,"isFrozen":<bool>}]}}`, in the order they were added;
 * `isFrozen` is the sub-account's own status or its main user's.
 */
function getSubUserList(ctx: SignedContext): ApiReply {
  requireMain(ctx);
  const { engine } = ctx;
  const mainFrozen = engine.userRecord(ctx.userId)?.status === 'frozen';
  const datas = engine.subAccounts.subsOf(ctx.userId).map((sub) => {
    const record = engine.userRecord(sub.userId);
    return {
      userName: engine.userName(sub.userId) ?? '',
      memo: sub.memo,
      created: record?.created ?? 0,
      isFrozen: mainFrozen || record?.status === 'frozen',
    };
  });
  return datasReply(datas);
}

/**
 * `doTransferFunds`: amount, currency (any letter case), fromUserName, toUserName: the caller and
 * its sub-accounts, either way and between two sub-accounts. Moves available spot balance, a bill
 * on both sides. Reply `{"code":1000,"message":"success"}` (as coinrust reads it).
 */
async function doTransferFunds(ctx: SignedContext): Promise<ApiReply> {
  requireMain(ctx);
  const coin = fundsCoinParam(ctx.engine, ctx.request, 'currency', true);
  const text = required(ctx.request, 'amount');
  const amount = parseDecimal(text, coin.unitDecimal);
  if (amount === undefined || amount === 0)
    refuse(
      'INVALID_AMOUNT',
      `amount ${echo(text)} must be a positive decimal with at most ${coin.unitDecimal} decimals`,
    );
  const fromUserId = familyMember(ctx, 'fromUserName', false);
  const toUserId = familyMember(ctx, 'toUserName', false);
  if (fromUserId === toUserId) refuse('INVALID_PARAMETER', 'fromUserName and toUserName must differ');
  await submitOrRefuse(ctx, {
    type: 'TransferFunds',
    mainUserId: ctx.userId,
    fromUserId,
    toUserId,
    coin: coin.name,
    amount,
  });
  return { json: { code: 1000, message: 'success' } };
}

/**
 * `createSubUserKey`: subUserName, and the permissions by the getAccountInfo flags' names:
 * assetPerm, entrustPerm, leverPerm, moneyPerm (1/0 or true/false, default false; at least one).
 * A sub-account's key never manages sub-accounts. Reply `{"code":1000,"message":"success",
 * "accessKey":"…","secretKey":"…"}`: the secret is shown once, as the operator's `key create` does.
 */
async function createSubUserKey(ctx: SignedContext): Promise<ApiReply> {
  requireMain(ctx);
  const userId = familyMember(ctx, 'subUserName', true);
  const permissions: KeyPermissions = {
    asset: flagParam(ctx.request, 'assetPerm', false),
    entrust: flagParam(ctx.request, 'entrustPerm', false),
    money: flagParam(ctx.request, 'moneyPerm', false),
    lever: flagParam(ctx.request, 'leverPerm', false),
  };
  if (!Object.values(permissions).some((p) => p))
    refuse('INVALID_PARAMETER', 'grant at least one of assetPerm, entrustPerm, leverPerm, moneyPerm');
  const key = issueSealedKey(ctx.sealer);
  await submitOrRefuse(ctx, {
    type: 'CreateApiKey',
    userId,
    accessKey: key.accessKey,
    sealedSecret: key.sealedSecret,
    permissions,
    ips: [],
  });
  return { json: { code: 1000, message: 'success', accessKey: key.accessKey, secretKey: key.secretKey } };
}

export const SUB_ACCOUNT_ENDPOINTS: readonly SignedEndpoint[] = [
  { method: 'addSubUser', permission: 'subUser', handler: addSubUser },
  { method: 'getSubUserList', permission: 'subUser', handler: getSubUserList },
  { method: 'doTransferFunds', permission: 'subUser', handler: doTransferFunds },
  { method: 'createSubUserKey', permission: 'subUser', handler: createSubUserKey },
];
