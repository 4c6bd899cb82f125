/**
 * @module sub-accounts — the signed sub-account endpoints (zb-api-facts §9; issue 33): addSubUser,
 * getSubUserList, doTransferFunds, createSubUserKey. Each needs a main user's key granted
 * `subuser` (getAccountInfo's subUserPerm). The rules are the engine's (src/engine/sub-accounts.ts);
 * this reads the parameters, hashes the sub-account's password and issues keys.
 */
import type { KeyPermissions } from '../../../domain/commands.ts';
import { FUND_PASSWORD, hashFundPassword } from '../../auth/fund-password.ts';
import { issueSealedKey } from '../../auth/secret-sealing.ts';
import type { Args } from '../../edge/endpoint.ts';
import { ANY_CASE_COIN, FLAG, readCoinUnits, TEXT, withDefault } from '../../edge/readers.ts';
import { quoted, refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { signedEndpoint, submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { datasReply } from './wire.ts';

/** The caller must be a main user: a sub-account manages no sub-accounts (INVALID_STATE). */
function requireMain(ctx: SignedContext): void {
  if (ctx.engine.subAccounts.mainOf(ctx.userId) !== undefined)
    refuse('INVALID_STATE', 'a sub-account cannot manage sub-accounts: use its main user');
}

/**
 * A user of the caller's family named by `name`: the caller itself or one of its sub-accounts.
 * Any other name, known or not, is the same USER_NOT_FOUND, so nobody learns whose a name is.
 */
function familyMember(ctx: SignedContext, name: string, text: string, subOnly: boolean): number {
  const userId = ctx.engine.userId(text);
  const isSelf = userId === ctx.userId && !subOnly;
  if (userId === undefined || !(isSelf || ctx.engine.subAccounts.mainOf(userId) === ctx.userId)) {
    refuse(
      'USER_NOT_FOUND',
      `${name}: ${quoted(text)} is not ${subOnly ? '' : 'this user or '}one of this user's sub-accounts`,
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
const ADD_SUB_USER_PARAMS = { subUserName: TEXT, password: TEXT, memo: withDefault(TEXT, '') };

async function addSubUser(ctx: SignedContext, args: Args<typeof ADD_SUB_USER_PARAMS>): Promise<ApiReply> {
  requireMain(ctx);
  const { subUserName: name, password, memo } = args;
  if (!FUND_PASSWORD.test(password))
    refuse('INVALID_PARAMETER', 'password must be 6 to 64 printable ASCII characters');
  if (ctx.engine.userId(name) !== undefined)
    refuse('INVALID_PARAMETER', `subUserName ${quoted(name)} is taken (names are unique regardless of case)`);
  const passwordHash = await hashFundPassword(password);
  await submitOrRefuse(ctx, { type: 'AddSubUser', mainUserId: ctx.userId, name, memo, passwordHash });
  return { json: successBody({ userName: name }) };
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
const TRANSFER_PARAMS = { amount: TEXT, currency: ANY_CASE_COIN, fromUserName: TEXT, toUserName: TEXT };

async function doTransferFunds(ctx: SignedContext, args: Args<typeof TRANSFER_PARAMS>): Promise<ApiReply> {
  requireMain(ctx);
  const coin = args.currency;
  const amount = readCoinUnits('amount', args.amount, coin, 'INVALID_AMOUNT', true);
  const fromUserId = familyMember(ctx, 'fromUserName', args.fromUserName, false);
  const toUserId = familyMember(ctx, 'toUserName', args.toUserName, false);
  if (fromUserId === toUserId) refuse('INVALID_PARAMETER', 'fromUserName and toUserName must differ');
  await submitOrRefuse(ctx, {
    type: 'TransferFunds',
    mainUserId: ctx.userId,
    fromUserId,
    toUserId,
    coin: coin.name,
    amount,
  });
  return { json: successBody() };
}

/**
 * `createSubUserKey`: subUserName, and the permissions by the getAccountInfo flags' names:
 * assetPerm, entrustPerm, leverPerm, moneyPerm (1/0 or true/false, default false; at least one).
 * A sub-account's key never manages sub-accounts. Reply `{"code":1000,"message":"success",
 * "accessKey":"…","secretKey":"…"}`: the secret is shown once, as the operator's `key create` does.
 */
const NO = withDefault(FLAG, false);
const SUB_USER_KEY_PARAMS = {
  subUserName: TEXT,
  assetPerm: NO,
  entrustPerm: NO,
  moneyPerm: NO,
  leverPerm: NO,
};

async function createSubUserKey(
  ctx: SignedContext,
  args: Args<typeof SUB_USER_KEY_PARAMS>,
): Promise<ApiReply> {
  requireMain(ctx);
  const userId = familyMember(ctx, 'subUserName', args.subUserName, true);
  const permissions: KeyPermissions = {
    asset: args.assetPerm,
    entrust: args.entrustPerm,
    money: args.moneyPerm,
    lever: args.leverPerm,
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
  return { json: successBody({ accessKey: key.accessKey, secretKey: key.secretKey }) };
}

export const SUB_ACCOUNT_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'addSubUser',
    permission: 'subUser',
    params: ADD_SUB_USER_PARAMS,
    handler: addSubUser,
  }),
  signedEndpoint({ method: 'getSubUserList', permission: 'subUser', params: {}, handler: getSubUserList }),
  signedEndpoint({
    method: 'doTransferFunds',
    permission: 'subUser',
    params: TRANSFER_PARAMS,
    handler: doTransferFunds,
  }),
  signedEndpoint({
    method: 'createSubUserKey',
    permission: 'subUser',
    params: SUB_USER_KEY_PARAMS,
    handler: createSubUserKey,
  }),
];
