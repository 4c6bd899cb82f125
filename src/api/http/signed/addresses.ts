/**
 * @module addresses — the signed address endpoints (moneyPerm): getUserAddress (the deposit
 * address of a coin), getPayinAddress (every chain's deposit address) and getWithdrawAddress (the
 * verified withdrawal address). Deposit addresses are created by the operator
 * (`bourse address create`), as the interface says they "must first have been created"; until
 * then these answer DEPOSIT_ADDRESS_MISSING (1001) saying so. docs/funds.md has the details.
 */
import { joinAddress } from '../../../domain/chains.ts';
import { UNVERIFIED_ADDRESS_TEXT } from '../../../domain/result-codes.ts';
import type { CoinSpec } from '../../../domain/specs.ts';
import type { DepositAddressView } from '../../../engine/funds.ts';
import { ANY_CASE_COIN, optional } from '../../edge/readers.ts';
import { refuse } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { datasReply } from './wire.ts';

function missing(ctx: SignedContext, coin: CoinSpec): never {
  const name = ctx.engine.userName(ctx.userId) ?? '<user>';
  return refuse(
    'DEPOSIT_ADDRESS_MISSING',
    `no ${coin.name} deposit address yet: it must first be created (the operator runs: bourse address create ${name} ${coin.name})`,
  );
}

/**
 * `getUserAddress`: currency. `datas.key` is the deposit address of the coin's first chain on
 * which the user has one; on a memo chain `<account>_<memo>`.
 */
function getUserAddress(ctx: SignedContext, { currency: coin }: { currency: CoinSpec }): ApiReply {
  const [first] = ctx.engine.funds.depositAddresses(ctx.userId, coin.name);
  if (first === undefined) missing(ctx, coin);
  return datasReply({ key: joinAddress(first.address, first.memo) });
}

/**
 * `getPayinAddress`: [currency] (ccxt sends none: then every coin). `datas` lists one entry per
 * chain with an address: `blockChain` (the chain's name in lower case), `isUseMemo`, `address`
 * or `account` + `memo`, `canDeposit`, `canWithdraw`, and `currency` (upper case; a Bourse
 * addition, since a chain name alone does not say the coin).
 */
function getPayinAddress(
  ctx: SignedContext,
  { currency: coin }: { currency: CoinSpec | undefined },
): ApiReply {
  const { engine } = ctx;
  const addresses = engine.funds.depositAddresses(ctx.userId, coin?.name);
  if (coin !== undefined && addresses.length === 0) missing(ctx, coin);
  return datasReply(addresses.map((a) => payinEntry(ctx, a)));
}

function payinEntry(ctx: SignedContext, a: DepositAddressView): Record<string, unknown> {
  const spec = ctx.engine.coin(a.coin);
  const chain = ctx.engine.funds.chain(a.coin, a.chain);
  const where =
    a.memo === ''
      ? { isUseMemo: false, address: a.address }
      : { isUseMemo: true, account: a.address, memo: a.memo };
  return {
    blockChain: a.chain.toLowerCase(),
    ...where,
    canDeposit: (spec?.canDeposit ?? false) && (chain?.canDeposit ?? false),
    canWithdraw: (spec?.canWithdraw ?? false) && (chain?.canWithdraw ?? false),
    currency: a.coin.toUpperCase(),
  };
}

/** `getWithdrawAddress`: currency. `datas.key` is the latest verified address of the user's book. */
function getWithdrawAddress(ctx: SignedContext, { currency: coin }: { currency: CoinSpec }): ApiReply {
  const verified = ctx.engine.funds.withdrawAddresses(ctx.userId, coin.name).filter((e) => e.verified);
  const latest = verified[verified.length - 1];
  if (latest === undefined) {
    refuse(
      'WITHDRAW_ADDRESS_UNVERIFIED',
      `${UNVERIFIED_ADDRESS_TEXT} (no verified ${coin.name} withdrawal address: the operator adds and verifies one with bourse withdraw-address add / verify)`,
    );
  }
  return datasReply({ key: latest.address });
}

// Coin names in any letter case: ccxt sends `BTC`.
export const ADDRESS_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'getUserAddress',
    webSocket: true,
    permission: 'money',
    params: { currency: ANY_CASE_COIN },
    handler: getUserAddress,
  }),
  signedEndpoint({
    method: 'getPayinAddress',
    permission: 'money',
    params: { currency: optional(ANY_CASE_COIN) },
    handler: getPayinAddress,
  }),
  signedEndpoint({
    method: 'getWithdrawAddress',
    webSocket: true,
    permission: 'money',
    params: { currency: ANY_CASE_COIN },
    handler: getWithdrawAddress,
  }),
];
