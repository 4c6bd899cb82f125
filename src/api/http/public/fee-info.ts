/**
 * @module fee-info — the getFeeInfo result (withdrawal fee and chains per coin), shared by the
 * unsigned route ccxt's loadMarkets calls and any signed variant.
 */
import type { CoinFunds } from '../../../domain/chains.ts';
import { unitsToNumber } from '../../../domain/money.ts';
import type { CoinSpec } from '../../../domain/specs.ts';

/** One chain of a coin, as `result.<COIN>[]` lists it (interface, "Withdrawal fee entry"). */
export interface FeeChainEntry {
  readonly chainName: string;
  /** Withdrawal fee in the coin, a JSON number. */
  readonly fee: number;
  readonly mainChainName: string;
  readonly canDeposit: boolean;
  readonly canWithdraw: boolean;
}

/**
 * `result` of getFeeInfo: every given coin under its UPPERCASE name with an array of its chains
 * (ccxt reads `.length`, and builds its currency list from these keys, so every coin is listed;
 * one moving on no chain has an empty array). A chain's switches are the coin's and its own.
 */
export function feeInfoResult(
  coins: readonly CoinSpec[],
  fundsOf: (coin: string) => CoinFunds | undefined,
): Record<string, FeeChainEntry[]> {
  const result: Record<string, FeeChainEntry[]> = {};
  for (const coin of coins) {
    result[coin.name.toUpperCase()] = (fundsOf(coin.name)?.chains ?? []).map((c) => ({
      chainName: c.name,
      fee: unitsToNumber(c.withdrawFee, coin.unitDecimal),
      mainChainName: c.mainChain,
      canDeposit: coin.canDeposit && c.canDeposit,
      canWithdraw: coin.canWithdraw && c.canWithdraw,
    }));
  }
  return result;
}
