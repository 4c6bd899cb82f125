/**
 * @module fee-info — the getFeeInfo result (withdrawal fee and chains per coin), shared by the
 * unsigned route ccxt's loadMarkets calls and any signed variant.
 */
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
 * `result` of getFeeInfo: every given coin under its UPPERCASE name with an array of chains
 * (ccxt reads `.length`, so it must be an array). Until chains are configured each coin has one
 * chain named after itself, fee 0, deposit and withdrawal switches from its CoinSpec.
 */
export function feeInfoResult(coins: readonly CoinSpec[]): Record<string, FeeChainEntry[]> {
  const result: Record<string, FeeChainEntry[]> = {};
  for (const coin of coins) {
    const name = coin.name.toUpperCase();
    result[name] = [
      {
        chainName: name,
        fee: 0,
        mainChainName: name,
        canDeposit: coin.canDeposit,
        canWithdraw: coin.canWithdraw,
      },
    ];
  }
  return result;
}
