/**
 * @module order-paths — the signed order requests the HTTP load of bench:http and bench:cluster
 * sends: a buy by `buyer` and a sell by `seller` of 0.01 BTC at 30000, alternating on each
 * connection so that the book stays small and half the orders trade.
 *
 * The signature does not cover reqTime, so each side's request is signed once and ends in
 * `&reqTime=`; a run appends its start time. The load generator then sends prebuilt requests, as
 * it does to a hello-world server (rebuilding each request cost autocannon a further 6–7% of the
 * orders' rate on these two cores).
 */
import { signedQuery } from '../test/fixtures/zb-client.ts';

export interface Keys {
  readonly accessKey: string;
  readonly secret: string;
}

/** `/api/order?…&reqTime=` for the buyer, then the seller. */
export function signedOrderPaths(buyer: Keys, seller: Keys): string[] {
  return [buyer, seller].map(({ accessKey, secret }, side) =>
    `/api/order?${signedQuery(
      'order',
      [
        ['currency', 'btc_usdt'],
        ['tradeType', side === 0 ? '1' : '0'],
        ['price', '30000.00'],
        ['amount', '0.0100'],
      ],
      accessKey,
      secret,
    )}`.replace(/&reqTime=\d+$/, '&reqTime='),
  );
}
