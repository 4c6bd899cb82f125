/**
 * @module snapshot — the plain-data form of the whole engine state (see `Engine.snapshot()`).
 * Versioned: a change of layout bumps SNAPSHOT_VERSION.
 */
import type { AcctType, OrderKind, Side } from '../domain/commands.ts';
import type { KeyPermissions } from '../domain/commands.ts';
import type { CoinSpec, MarketSpec, VenueSettings } from '../domain/specs.ts';
import type { DemoSnapshot } from './demo-state.ts';
import type { FundsSnapshot } from './funds.ts';

/** 2: deposits, withdrawals and lifetime totals moved into `funds`, with addresses and passwords. */
export const SNAPSHOT_VERSION = 2;

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
  /** Funds configuration, addresses, fund passwords, deposits, withdrawals and lifetime totals. */
  readonly funds: FundsSnapshot;
  /** The demo market's state; absent on a venue that never started it (its hash unchanged). */
  readonly demo?: DemoSnapshot | undefined;
}
