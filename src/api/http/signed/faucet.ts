/**
 * @module faucet — the demo faucet as a signed endpoint (a Bourse extension; moneyPerm): a demo
 * user credits themself test money within the coin's hourly allowance, which the engine enforces
 * (src/engine/demo-state.ts). The trading page's faucet button calls it like any client would.
 */
import type { Args } from '../../edge/endpoint.ts';
import { ANY_CASE_COIN, readCoinUnits, TEXT } from '../../edge/readers.ts';
import { successBody } from '../../edge/refusal.ts';
import type { ApiReply } from '../types.ts';
import { signedEndpoint, submitOrRefuse, type SignedContext, type SignedEndpoint } from './pipeline.ts';

const FAUCET_PARAMS = { currency: ANY_CASE_COIN, amount: TEXT };

/**
 * `faucet`: currency (a coin, any letter case), amount (decimal text in the coin's decimals).
 * Reply `{"code":1000,"message":"success","id":"faucet:<seq>"}` once the credit is durable.
 * Refusals: the engine's (1012 for a user who is not a demo user, FAUCET_LIMIT 1001 naming what
 * is left this hour, 3005 for a coin the faucet does not give), 3003 for a malformed amount.
 */
async function faucet(ctx: SignedContext, args: Args<typeof FAUCET_PARAMS>): Promise<ApiReply> {
  const coin = args.currency;
  const amount = readCoinUnits('amount', args.amount, coin, 'INVALID_AMOUNT', true);
  const r = await submitOrRefuse(ctx, { type: 'DemoFaucet', userId: ctx.userId, coin: coin.name, amount });
  const deposit = r.events.find((e) => e.type === 'DepositUpdated');
  return { json: successBody({ id: deposit?.depositId }) };
}

export const FAUCET_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({ method: 'faucet', permission: 'money', params: FAUCET_PARAMS, handler: faucet }),
];
