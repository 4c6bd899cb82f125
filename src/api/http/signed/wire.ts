/** @module wire — the signed endpoints' shared wire pieces: the records' success body, and which order a cancel or query names. */
import { refuse } from '../../edge/refusal.ts';
import { CUSTOMER_ORDER_ID, optional, ORDER_ID } from '../../edge/readers.ts';
import type { ApiReply } from '../types.ts';

/** The address and record endpoints' success body: `{code:1000, message:{des, isSuc, datas}}`. */
export function datasReply(datas: unknown): ApiReply {
  return { json: { code: 1000, message: { des: 'success', isSuc: true, datas } } };
}

/** Which order a cancel or query names: exactly one of `id` (a positive integer) and `customerOrderId`. */
export type OrderRef = { readonly orderId: number } | { readonly clientOrderId: string };

/** The parameters naming an order: `id` (ORDER_ID) or `customerOrderId`, exactly one (`orderRef`). */
export const ORDER_REF_PARAMS = {
  id: optional(ORDER_ID),
  customerOrderId: optional(CUSTOMER_ORDER_ID),
} as const;

/** The order the two read parameters name: INVALID_PARAMETER when both or neither are given. */
export function orderRef(args: {
  readonly id: number | undefined;
  readonly customerOrderId: string | undefined;
}): OrderRef {
  if (args.id !== undefined && args.customerOrderId !== undefined) {
    refuse('INVALID_PARAMETER', 'id and customerOrderId are mutually exclusive: give one');
  }
  if (args.id !== undefined) return { orderId: args.id };
  if (args.customerOrderId !== undefined) return { clientOrderId: args.customerOrderId };
  return refuse('INVALID_PARAMETER', 'id or customerOrderId is required');
}

/** ORDER_NOT_FOUND (3001), naming the order asked for and its market (`open`: only open orders count). */
export function orderNotFound(market: string, ref: OrderRef, open: boolean): never {
  const which = 'orderId' in ref ? `id ${ref.orderId}` : `customerOrderId ${ref.clientOrderId}`;
  return refuse(
    'ORDER_NOT_FOUND',
    `order not found: this account has no ${open ? 'open ' : ''}order with ${which} in ${market}` +
      (open ? ' (finished, or never placed)' : ''),
  );
}
