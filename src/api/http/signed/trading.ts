/** @module trading — the signed order-entry endpoints: order, orderMoreV2, cancelOrder, cancelAllOrdersAfter. */
import type { AcctType, OrderKind } from '../../../domain/commands.ts';
import { MAX_DECIMAL_TEXT_LENGTH, unitsToNumber, type Lots, type PriceTicks } from '../../../domain/money.ts';
import { parseOrderNumbers } from '../../../domain/order-input.ts';
import type { MarketSpec } from '../../../domain/specs.ts';
import { MAX_BATCH_ORDERS, type OrderView } from '../../../engine/engine.ts';
import type { Args } from '../../edge/endpoint.ts';
import {
  ACCT_TYPE,
  choice,
  CUSTOMER_ORDER_ID,
  FLAG,
  MARKET,
  optional,
  TEXT,
  TRADE_TYPE,
  withDefault,
} from '../../edge/readers.ts';
import { quoted, refuse, successBody } from '../../edge/refusal.ts';
import type { ApiReply, VenuePort } from '../types.ts';
import {
  requirePermission,
  signedEndpoint,
  submitOrRefuse,
  type SignedContext,
  type SignedEndpoint,
} from './pipeline.ts';
import { orderNotFound, orderRef, ORDER_REF_PARAMS, type OrderRef } from './wire.ts';

/** `${userId}:${market}:${customerOrderId}` of the placements each venue is journaling now. */
const placing = new WeakMap<VenuePort, Set<string>>();

/**
 * Idempotent placement, for strict keys only (replay protection, docs/api-keys.md): refuses a
 * customerOrderId that already names an order of the user in the market, whatever that order's
 * state, or one being placed right now (DUPLICATE_REFERENCE, 3005), so a retry of an accepted
 * order is never a second order. Every other key may repeat a customerOrderId, as the interface
 * says ("when duplicated, cancel and query act only on the latest order with that id"). Returns
 * the claim to release once the placement has been applied. The engine keeps every id it has
 * seen (`orderIdForClientId`, the latest order with it); the claims cover the moment between the
 * check and the apply.
 */
function claimClientOrderId(ctx: SignedContext, market: MarketSpec, clientOrderId: string): () => void {
  const claims = placing.get(ctx.venue) ?? new Set<string>();
  placing.set(ctx.venue, claims);
  const key = `${ctx.userId}:${market.name}:${clientOrderId}`;
  const existing = ctx.engine.orderIdForClientId(ctx.userId, market.name, clientOrderId);
  if (existing !== undefined || claims.has(key)) {
    refuse(
      'DUPLICATE_REFERENCE',
      `customerOrderId ${quoted(clientOrderId)} already names ${existing === undefined ? 'an order being placed' : `order ${existing}`} in ${market.name}: ` +
        'this key has replay protection, so a repeated placement is refused; give each new order a new customerOrderId',
    );
  }
  claims.add(key);
  return () => claims.delete(key);
}

/** Longest tradeParams text read: 20 pairs of two 40-character decimals with quotes and spaces fit well. */
const MAX_TRADE_PARAMS_LENGTH = 4096;

/**
 * The account an order trades for: `acctType` 0 spot (default), 1 isolated, 2 cross; a margin
 * order needs leverPerm besides entrustPerm. `enableExpress` (1/0, true/false; margin orders only,
 * default off): borrow what the order needs beyond the account's balance, within its limit. The
 * engine refuses what the margin account's state decides (MARGIN_NOT_OPEN, a short balance).
 */
function accountOf(
  ctx: SignedContext,
  acctType: AcctType,
  express: boolean,
): { acctType: AcctType; express?: true } {
  if (acctType === 0) {
    if (express) refuse('INVALID_PARAMETER', 'enableExpress applies to margin orders only (acctType 1 or 2)');
    return { acctType };
  }
  requirePermission(ctx, 'lever', `a margin order (acctType ${acctType})`);
  return express ? { acctType, express } : { acctType };
}

/**
 * `order`: currency, tradeType, price, amount, [acctType], [enableExpress], [customerOrderId], [orderType: absent
 * or empty a limit order, 1 PostOnly, 2 IOC; anything else is refused, so that a typo never
 * becomes an order that takes liquidity]. Other parameters are ignored (but were signed).
 * Reply `{"code":1000,"message":"success","id":"<order id>"}` once the order is durable and applied.
 */
const ORDER_PARAMS = {
  currency: MARKET,
  tradeType: TRADE_TYPE,
  price: TEXT,
  amount: TEXT,
  acctType: withDefault(ACCT_TYPE, 0),
  enableExpress: withDefault(FLAG, false),
  customerOrderId: withDefault(CUSTOMER_ORDER_ID, ''),
  orderType: optional(choice(['1', '2'])),
};

async function placeOrder(ctx: SignedContext, args: Args<typeof ORDER_PARAMS>): Promise<ApiReply> {
  const { currency: market, tradeType: side, customerOrderId: clientOrderId } = args;
  const account = accountOf(ctx, args.acctType, args.enableExpress);
  const kind: OrderKind =
    args.orderType === undefined ? 'limit' : args.orderType === '1' ? 'postOnly' : 'ioc';
  const numbers = parseOrderNumbers(market, args.price, args.amount);
  if (!numbers.ok) refuse(numbers.result, numbers.message);
  const release =
    clientOrderId === '' || ctx.key.replayProtection !== true
      ? undefined
      : claimClientOrderId(ctx, market, clientOrderId);
  try {
    const result = await submitOrRefuse(ctx, {
      type: 'PlaceOrder',
      userId: ctx.userId,
      market: market.name,
      side,
      kind,
      price: numbers.price,
      amount: numbers.amount,
      ...account,
      clientOrderId,
    });
    return { json: successBody({ id: String(result.orderId) }) };
  } finally {
    release?.();
  }
}

/** One number of tradeParams: a JSON number literal or a quoted decimal, kept as text (never a float). */
const TRADE_NUMBER = String.raw`(?:"([^"\\]{0,${MAX_DECIMAL_TEXT_LENGTH}})"|(-?[0-9][0-9.eE+-]{0,${MAX_DECIMAL_TEXT_LENGTH}}))`;
const TRADE_PAIR = new RegExp(String.raw`\[\s*${TRADE_NUMBER}\s*,\s*${TRADE_NUMBER}\s*\]`, 'y');

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i] as string)) i++;
  return i;
}

/**
 * Reads tradeParams `[[price,amount],...]` (1 to 20 pairs) as decimal text without JSON.parse, so
 * no price or amount ever passes through a float; then parses every pair with the market's
 * scales. Refusals: INVALID_PARAMETER for the shape, INVALID_PRICE / INVALID_AMOUNT naming the pair.
 */
export function parseTradeParams(market: MarketSpec, text: string): { price: PriceTicks; amount: Lots }[] {
  const shape = (): never =>
    refuse(
      'INVALID_PARAMETER',
      `tradeParams must be a JSON array of 1 to ${MAX_BATCH_ORDERS} [price,amount] pairs`,
    );
  if (text.length > MAX_TRADE_PARAMS_LENGTH) shape();
  const texts: [string, string][] = [];
  let i = skipSpace(text, 0);
  if (text[i] !== '[') shape();
  i = skipSpace(text, i + 1);
  for (;;) {
    TRADE_PAIR.lastIndex = i;
    const m = TRADE_PAIR.exec(text);
    if (m === null) return shape();
    texts.push([(m[1] ?? m[2]) as string, (m[3] ?? m[4]) as string]);
    if (texts.length > MAX_BATCH_ORDERS) {
      refuse('INVALID_PARAMETER', `tradeParams holds more than ${MAX_BATCH_ORDERS} pairs`);
    }
    i = skipSpace(text, TRADE_PAIR.lastIndex);
    if (text[i] === ',') {
      i = skipSpace(text, i + 1);
      continue;
    }
    if (text[i] !== ']' || skipSpace(text, i + 1) !== text.length) shape();
    break;
  }
  return texts.map(([priceText, amountText], index) => {
    const numbers = parseOrderNumbers(market, priceText, amountText);
    if (!numbers.ok) refuse(numbers.result, `tradeParams pair ${index + 1}: ${numbers.message}`);
    return { price: numbers.price, amount: numbers.amount };
  });
}

/**
 * `orderMoreV2`: market, tradeParams, tradeType, [acctType], [enableExpress]. All orders are limit orders on one
 * side. Every pair is validated here, then the engine checks them all (minimums, and the whole
 * batch's cost against the balance) before placing any: a refusal places nothing and names the
 * pair. Reply `{"code":1000,"message":"success","data":[ids as numbers]}`, in the pairs' order.
 */
const BATCH_PARAMS = {
  market: MARKET,
  tradeParams: TEXT,
  tradeType: TRADE_TYPE,
  acctType: withDefault(ACCT_TYPE, 0),
  enableExpress: withDefault(FLAG, false),
};

async function placeOrderBatch(ctx: SignedContext, args: Args<typeof BATCH_PARAMS>): Promise<ApiReply> {
  const { market, tradeType: side } = args;
  const orders = parseTradeParams(market, args.tradeParams);
  const account = accountOf(ctx, args.acctType, args.enableExpress);
  const result = await submitOrRefuse(ctx, {
    type: 'PlaceOrderBatch',
    userId: ctx.userId,
    market: market.name,
    side,
    ...account,
    orders,
  });
  return { json: successBody({ data: result.orderIds ?? [] }) };
}

/** The user's resting order named by id or customerOrderId in this market, or ORDER_NOT_FOUND. */
function openOrderOf(ctx: SignedContext, market: MarketSpec, ref: OrderRef): OrderView {
  const id =
    'orderId' in ref
      ? ref.orderId
      : ctx.engine.orderIdForClientId(ctx.userId, market.name, ref.clientOrderId);
  const order = id === undefined ? undefined : ctx.engine.openOrder(id);
  if (order === undefined || order.userId !== ctx.userId || order.market !== market.name) {
    orderNotFound(market.name, ref, true);
  }
  return order;
}

/**
 * `cancelOrder`: currency and one of id / customerOrderId, [acctType: the order must be of that
 * account]. Reply (the spec's shape, which ccxt's
 * error check passes because code is 1000; `id` is added so ccxt's parseOrder has the order id):
 * `{"code":1000,"message":{"des":"success","isSuc":true,"datas":{"amount","price","completeMonty",
 * "completeAmount"}},"id":"<id>"}` with numbers for the four values. ORDER_NOT_FOUND (3001) when
 * the order is not resting (unknown, another user's, or already finished).
 */
const CANCEL_PARAMS = {
  currency: MARKET,
  ...ORDER_REF_PARAMS,
  acctType: optional(ACCT_TYPE),
  // Checked when sent (1/0, true/false); a cancel borrows nothing.
  enableExpress: optional(FLAG),
};

async function cancelOrder(ctx: SignedContext, args: Args<typeof CANCEL_PARAMS>): Promise<ApiReply> {
  const { currency: market, acctType } = args;
  const ref = orderRef(args);
  // Checked here too so that a cancel of nothing is answered without being journaled.
  const open = openOrderOf(ctx, market, ref);
  if (acctType !== undefined && open.acctType !== acctType) orderNotFound(market.name, ref, true);
  const result = await submitOrRefuse(ctx, {
    type: 'CancelOrder',
    userId: ctx.userId,
    market: market.name,
    orderId: open.id,
    clientOrderId: '',
  });
  const order = result.order ?? open;
  const quoteDecimals = ctx.engine.coin(market.quote)?.unitDecimal ?? 8;
  return {
    json: {
      code: 1000,
      message: {
        des: 'success',
        isSuc: true,
        datas: {
          amount: unitsToNumber(order.amount, market.amountScale),
          price: unitsToNumber(order.price, market.priceScale),
          completeMonty: unitsToNumber(order.filledValue, quoteDecimals),
          completeAmount: unitsToNumber(order.filled, market.amountScale),
        },
      },
      id: String(order.id),
    },
  };
}

/**
 * `cancelAllOrdersAfter`: currency. Arms (or refreshes) the dead-man switch: unless called again,
 * the user's open orders in the market are cancelled when the deadline passes (one minute by
 * default). Reply `{"code":1000,"message":"success","deadline":<ms>}`.
 */
async function cancelAllOrdersAfter(
  ctx: SignedContext,
  { currency: market }: { currency: MarketSpec },
): Promise<ApiReply> {
  const result = await submitOrRefuse(ctx, {
    type: 'CancelAllOrdersAfter',
    userId: ctx.userId,
    market: market.name,
  });
  return { json: successBody({ deadline: result.deadline }) };
}

export const TRADING_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'order',
    permission: 'entrust',
    params: ORDER_PARAMS,
    handler: placeOrder,
    webSocket: true,
  }),
  signedEndpoint({
    method: 'orderMoreV2',
    permission: 'entrust',
    params: BATCH_PARAMS,
    handler: placeOrderBatch,
  }),
  signedEndpoint({
    method: 'cancelOrder',
    webSocket: true,
    permission: 'entrust',
    params: CANCEL_PARAMS,
    handler: cancelOrder,
  }),
  signedEndpoint({
    method: 'cancelAllOrdersAfter',
    permission: 'entrust',
    params: { currency: MARKET },
    handler: cancelAllOrdersAfter,
  }),
];
