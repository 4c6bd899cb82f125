/**
 * @module liquidation-wire — a forced liquidation's record (src/margin/liquidation.ts) as the user's
 * bills and the operator's admin API show it (issue 15; the reference knows no such answer): one
 * shape for both. Amounts are decimal text with the coin's decimals, prices with the market's
 * price scale, the risk rate with 4 decimals rounded down, times in ms.
 */
import { formatUnits } from '../../domain/money.ts';
import type { LiquidationRecord } from '../../margin/liquidation.ts';
import type { Units } from '../../margin/movement.ts';
import { formatRiskRate, leverKey, type CoinView } from './margin-wire.ts';

/** The market a record's account trades in, with its coins' decimals. */
export interface LiquidationMarketView {
  readonly name: string;
  readonly priceScale: number;
  readonly base: CoinView;
  readonly quote: CoinView;
}

export interface LiquidationOrderWire {
  time: number;
  side: 'sell' | 'buy';
  /** The order's limit: the edge of the price band. */
  price: string;
  /** Base coin. */
  amount: string;
  filled: string;
}

export interface LiquidationCoinWire {
  coin: string;
  /** Repaid with the account's own money. */
  repaid: string;
  /** Owed once the account's money ran out. */
  shortfall: string;
  /** Paid by the insurance fund toward the shortfall. */
  insurance: string;
  /** shortfall − insurance, written off against the lenders pro rata. */
  badDebt: string;
  /** The liquidation fee, to the insurance fund. */
  fee: string;
}

export interface LiquidationWire {
  id: number;
  userId: number;
  /** 1 isolated, 2 cross (the interface's acctType). */
  acctType: number;
  /** The isolated account's market as the margin answers name it (`btcusdt`); "" for cross. */
  marketName: string;
  /** 'running' while the band keeps part of the position (the account is locked), then 'done'. */
  status: 'running' | 'done';
  startTime: number;
  /** 0 while running. */
  endTime: number;
  /** The mark price when it began. */
  markPrice: string;
  /** The risk rate that triggered it. */
  riskRate: string;
  orders: LiquidationOrderWire[];
  coins: LiquidationCoinWire[];
}

/** One record on the wire; `market` is undefined for a cross account's. */
export function liquidationWire(
  r: LiquidationRecord,
  market: LiquidationMarketView | undefined,
  coins: (name: string) => CoinView | undefined,
): LiquidationWire {
  const priceScale = market?.priceScale ?? 0;
  const amount = (u: Units, coin: string): string => formatUnits(u, coins(coin)?.unitDecimal ?? 8);
  const base = market?.base.name ?? '';
  return {
    id: r.id,
    userId: r.account.kind === 'system' ? 0 : r.account.userId,
    acctType: r.account.kind === 'cross' ? 2 : 1,
    marketName: r.account.kind === 'isolated' ? leverKey(r.account.market) : '',
    status: r.status,
    startTime: r.startMs,
    endTime: r.endMs,
    markPrice: formatUnits(r.markAtStart, priceScale),
    riskRate: formatRiskRate(r.riskRateBp),
    orders: r.orders.map((o) => ({
      time: o.timeMs,
      side: o.side,
      price: formatUnits(o.priceTicks, priceScale),
      amount: amount(o.amount, base),
      filled: amount(o.filled, base),
    })),
    coins: r.coins.map((c) => ({
      coin: c.coin,
      repaid: amount(c.repaid, c.coin),
      shortfall: amount(c.shortfall, c.coin),
      insurance: amount(c.insurance, c.coin),
      badDebt: amount(c.badDebt, c.coin),
      fee: amount(c.fee, c.coin),
    })),
  };
}
