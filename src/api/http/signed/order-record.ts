/** @module order-record — maps an order (live from the engine, or from history) to the interface's order record (getOrder and the order lists). */
import { BUY, type AcctType, type OrderKind, type Side } from '../../../domain/commands.ts';
import { orderTypeCode, type OrderStatus } from '../../../domain/events.ts';
import { formatUnitsTrim, unitsToNumber } from '../../../domain/money.ts';
import type { MarketSpec } from '../../../domain/specs.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';

/** The fields an order record needs; both the engine's OrderView and history's OrderRow have them. */
export interface OrderLike {
  readonly id: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: number;
  readonly amount: number;
  readonly filled: number;
  readonly filledValue: number;
  /** In the coin received (base for a buy, quote for a sell). */
  readonly fees: number;
  /** In the platform coin. */
  readonly platformFees: number;
  readonly status: OrderStatus;
  readonly acctType: AcctType;
  readonly usePlatformCoin: boolean;
  readonly time: number;
}

/** The order record of zb-api-facts §6.5/§6.6, key for key. */
export interface OrderRecord {
  readonly acctType: number;
  readonly currency: string;
  readonly fees: string;
  readonly id: string;
  readonly price: number;
  readonly status: number;
  readonly total_amount: number;
  readonly trade_amount: number;
  readonly trade_date: number;
  readonly trade_money: number;
  readonly type: number;
  readonly useZbFee: boolean;
  readonly webId: number;
}

/**
 * The wire record. `fees` is decimal text (the interface types it as a string): the fee paid in
 * the platform coin when the order paid only that way (`useZbFee` true), else the fee in the coin
 * received. An order that paid both ways (the platform-coin balance ran short mid-way) reports the
 * received-coin part; the bills show both. Before any fill `useZbFee` is the order's preference.
 */
export function orderRecord(engine: VenueState, market: MarketSpec, o: OrderLike): OrderRecord {
  const platformCoin = engine.settings.platformCoin;
  const paidInPlatformCoin = o.platformFees > 0 && o.fees === 0;
  const feeCoin = paidInPlatformCoin ? platformCoin : o.side === BUY ? market.base : market.quote;
  const feeDecimals = engine.coin(feeCoin)?.unitDecimal ?? 8;
  const quoteDecimals = engine.coin(market.quote)?.unitDecimal ?? 8;
  return {
    acctType: o.acctType,
    currency: o.market,
    fees: formatUnitsTrim(paidInPlatformCoin ? o.platformFees : o.fees, feeDecimals),
    id: String(o.id),
    price: unitsToNumber(o.price, market.priceScale),
    status: o.status,
    total_amount: unitsToNumber(o.amount, market.amountScale),
    trade_amount: unitsToNumber(o.filled, market.amountScale),
    trade_date: o.time,
    trade_money: unitsToNumber(o.filledValue, quoteDecimals),
    type: orderTypeCode(o.kind, o.side),
    useZbFee: paidInPlatformCoin || (o.fees === 0 && o.platformFees === 0 && o.usePlatformCoin),
    webId: 0,
  };
}
