/**
 * @module snapshot — the plain-data form of the whole engine state (see `Engine.snapshot()`).
 * Versioned: a change of layout bumps SNAPSHOT_VERSION.
 */
import type { AcctType, OrderKind, Side } from '../domain/commands.ts';
import type { KeyPermissions } from '../domain/commands.ts';
import type { CoinSpec, MarketSpec, VenueSettings } from '../domain/specs.ts';

export const SNAPSHOT_VERSION = 1;

/** A resting order as a tuple (compact for large books). */
export type SnapshotOrder = [
  id: number,
  userId: number,
  market: string,
  side: Side,
  kind: OrderKind,
  price: number,
  amount: number,
  remaining: number,
  filled: number,
  filledValue: number,
  fees: number,
  platformFees: number,
  frozen: number,
  time: number,
  clientOrderId: string,
  acctType: AcctType,
  usePlatformCoin: boolean,
  lastTradeId: number,
  lastTradePrice: number,
  lastTradeAmount: number,
  lastTradeTime: number,
];

export interface EngineSnapshot {
  readonly version: number;
  /** Sequence number of the last command the state includes. */
  readonly lastSeq: number;
  readonly settings: VenueSettings;
  readonly coins: CoinSpec[];
  readonly markets: { spec: MarketSpec; lastPrice: number }[];
  readonly nextUserId: number;
  readonly nextOrderId: number;
  readonly nextTradeId: number;
  /** [userId, name, usePlatformCoin, available per coin, frozen per coin] */
  readonly users: [number, string, boolean, number[], number[]][];
  readonly orders: SnapshotOrder[];
  readonly clientIds: [string, number][];
  readonly deadlines: [string, number][];
  /** [depositId, [userId, coinIndex, amount]] */
  readonly deposits: [string, number[]][];
  /** [withdrawalId, [userId, coinIndex, amount, fee, state]] */
  readonly withdrawals: [string, (number | string)[]][];
  readonly apiKeys: [
    string,
    {
      userId: number;
      accessKey: string;
      sealedSecret: string;
      permissions: KeyPermissions;
      ips: readonly string[];
    },
  ][];
  readonly feeIncome: number[];
  /** Lifetime credits and settled withdrawals per coin, as decimal integer text (they may pass 2^53). */
  readonly credited: string[];
  readonly withdrawn: string[];
}
