/** @module order-queries — the signed order queries: getOrder and the order lists (live orders from the engine, the rest from history). */
import type { AcctType, Side } from '../../../domain/commands.ts';
import type { MarketSpec } from '../../../domain/specs.ts';
import type { OrderStatusFilter } from '../../../store/history-store.ts';
import type { Args } from '../../edge/endpoint.ts';
import { ACCT_TYPE, FLAG, MARKET, optional, PAGE_INDEX, pageParams, TRADE_TYPE } from '../../edge/readers.ts';
import type { ApiReply } from '../types.ts';
import { orderRecord, type OrderLike, type OrderRecord } from './order-record.ts';
import { awaitHistory, signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';
import { orderNotFound, orderRef, ORDER_REF_PARAMS } from './wire.ts';

/** getOrders' fixed page size. */
export const GET_ORDERS_PAGE_SIZE = 10;
/** Default page size of the lists that take one. */
export const DEFAULT_LIST_PAGE_SIZE = 10;
/** Largest pageSize of the lists that take one (zb-api-facts §6.6). */
export const MAX_LIST_PAGE_SIZE = 100;

/**
 * `getOrder`: currency and one of id / customerOrderId (the latest order with it), [acctType: the
 * order must be of that account]. A resting order
 * is read from the engine (live state); any other from the history store, after it has caught up
 * with what was acknowledged. Reply: the bare order record; ORDER_NOT_FOUND (3001) if there is no
 * such order of this user in this market.
 */
async function getOrder(ctx: SignedContext, args: Args<typeof GET_ORDER_PARAMS>): Promise<ApiReply> {
  const { currency: market, acctType } = args;
  const ref = orderRef(args);
  const { engine, userId } = ctx;
  const id =
    'orderId' in ref ? ref.orderId : engine.orderIdForClientId(userId, market.name, ref.clientOrderId);
  const ofAccount = (o: { acctType: AcctType }): boolean => acctType === undefined || o.acctType === acctType;
  const live = id === undefined ? undefined : engine.openOrder(id);
  if (live !== undefined && live.userId === userId && live.market === market.name) {
    if (!ofAccount(live)) orderNotFound(market.name, ref, false);
    return { json: orderRecord(engine, market, live) };
  }
  await awaitHistory(ctx);
  const row =
    id !== undefined
      ? await ctx.venue.history.getOrder(userId, market.name, id)
      : 'clientOrderId' in ref
        ? await ctx.venue.history.getOrderByClientId(userId, market.name, ref.clientOrderId)
        : undefined;
  if (row === undefined || !ofAccount(row)) orderNotFound(market.name, ref, false);
  return { json: orderRecord(engine, market, row) };
}

interface ListRequest {
  readonly market: MarketSpec;
  /** Only this account's orders (`acctType` 0/1/2); absent: every account. */
  readonly acctType: AcctType | undefined;
  readonly side: Side | undefined;
  readonly pageIndex: number;
  readonly pageSize: number;
}

/**
 * A query's account: `acctType` (0 spot, 1 isolated, 2 cross) only that account's orders; absent,
 * every account's. `enableExpress`, when sent, is checked (1/0, true/false) and has no effect on a read.
 */
const ACCOUNT_PARAMS = { acctType: optional(ACCT_TYPE), enableExpress: optional(FLAG) } as const;
const PAGE_PARAMS = pageParams(1, MAX_LIST_PAGE_SIZE, DEFAULT_LIST_PAGE_SIZE);

const GET_ORDER_PARAMS = { currency: MARKET, ...ORDER_REF_PARAMS, ...ACCOUNT_PARAMS };
const GET_ORDERS_PARAMS = {
  currency: MARKET,
  tradeType: TRADE_TYPE,
  pageIndex: PAGE_INDEX,
  ...ACCOUNT_PARAMS,
};
const SIDE_LIST_PARAMS = { currency: MARKET, tradeType: TRADE_TYPE, ...PAGE_PARAMS, ...ACCOUNT_PARAMS };
const LIST_PARAMS = { currency: MARKET, ...PAGE_PARAMS, ...ACCOUNT_PARAMS };

/**
 * A page of the user's orders from history, newest first, as a bare array. An empty page is `[]`
 * (not the real API's 3001): ccxt reads an array body without an error check, so fetchOpenOrders
 * and friends return [] instead of throwing OrderNotFound (docs/trading-api.md).
 */
async function historyList(
  ctx: SignedContext,
  list: ListRequest,
  status: OrderStatusFilter,
): Promise<ApiReply> {
  await awaitHistory(ctx);
  const rows = await ctx.venue.history.listOrders(ctx.userId, list.market.name, {
    side: list.side,
    status,
    acctType: list.acctType,
    pageIndex: list.pageIndex,
    pageSize: list.pageSize,
  });
  return { json: rows.map((row) => orderRecord(ctx.engine, list.market, row)) };
}

/** `getOrders`: currency, tradeType, [pageIndex]; 10 per page, every status. */
async function getOrders(ctx: SignedContext, args: Args<typeof GET_ORDERS_PARAMS>): Promise<ApiReply> {
  const { currency: market, tradeType: side, pageIndex, acctType } = args;
  return historyList(ctx, { market, acctType, side, pageIndex, pageSize: GET_ORDERS_PAGE_SIZE }, 'all');
}

/** `getOrdersNew`: currency, tradeType, [pageIndex], [pageSize ≤ 100]; every status. */
async function getOrdersNew(ctx: SignedContext, args: Args<typeof SIDE_LIST_PARAMS>): Promise<ApiReply> {
  const { currency: market, tradeType: side, acctType, pageIndex, pageSize } = args;
  return historyList(ctx, { market, acctType, side, pageIndex, pageSize }, 'all');
}

/** `getOrdersIgnoreTradeType`: currency, [pageIndex], [pageSize ≤ 100]; both sides, every status. */
async function getOrdersIgnoreTradeType(
  ctx: SignedContext,
  args: Args<typeof LIST_PARAMS>,
): Promise<ApiReply> {
  const { currency: market, acctType, pageIndex, pageSize } = args;
  return historyList(ctx, { market, acctType, side: undefined, pageIndex, pageSize }, 'all');
}

/**
 * `getFinishedAndPartialOrders`: currency, [pageIndex], [pageSize ≤ 100]; orders that have traded
 * (completed, cancelled after a partial fill, or resting partly filled), both sides.
 */
async function getFinishedAndPartialOrders(
  ctx: SignedContext,
  args: Args<typeof LIST_PARAMS>,
): Promise<ApiReply> {
  const { currency: market, acctType, pageIndex, pageSize } = args;
  return historyList(ctx, { market, acctType, side: undefined, pageIndex, pageSize }, 'finishedAndPartial');
}

/**
 * `getUnfinishedOrdersIgnoreTradeType`: currency, [pageIndex], [pageSize ≤ 100]; the user's
 * resting orders (status 0 or 3) from the engine's live state, newest first; `[]` when none.
 */
async function getUnfinishedOrders(ctx: SignedContext, args: Args<typeof LIST_PARAMS>): Promise<ApiReply> {
  const { currency: market, acctType, pageIndex, pageSize } = args;
  const open: readonly OrderLike[] = ctx.engine
    .openOrders(ctx.userId, market.name)
    .filter((o) => acctType === undefined || o.acctType === acctType);
  const records: OrderRecord[] = [];
  // openOrders is oldest first; walk it backwards for newest first.
  const start = open.length - 1 - (pageIndex - 1) * pageSize;
  for (let i = start; i >= 0 && i > start - pageSize; i--) {
    records.push(orderRecord(ctx.engine, market, open[i] as OrderLike));
  }
  return { json: records };
}

export const ORDER_QUERY_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'getOrder',
    permission: 'entrust',
    params: GET_ORDER_PARAMS,
    handler: getOrder,
    webSocket: true,
  }),
  signedEndpoint({
    method: 'getOrders',
    webSocket: true,
    permission: 'entrust',
    params: GET_ORDERS_PARAMS,
    handler: getOrders,
  }),
  signedEndpoint({
    method: 'getOrdersNew',
    webSocket: true,
    permission: 'entrust',
    params: SIDE_LIST_PARAMS,
    handler: getOrdersNew,
  }),
  signedEndpoint({
    method: 'getOrdersIgnoreTradeType',
    webSocket: true,
    permission: 'entrust',
    params: LIST_PARAMS,
    handler: getOrdersIgnoreTradeType,
  }),
  signedEndpoint({
    method: 'getUnfinishedOrdersIgnoreTradeType',
    webSocket: true,
    permission: 'entrust',
    params: LIST_PARAMS,
    handler: getUnfinishedOrders,
  }),
  signedEndpoint({
    method: 'getFinishedAndPartialOrders',
    permission: 'entrust',
    params: LIST_PARAMS,
    handler: getFinishedAndPartialOrders,
  }),
];
