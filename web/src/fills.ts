/**
 * @module fills — a trader's fills made from the order records of `push_user_incr_record`: each
 * change of an order carries its latest fill (trade id, price, amount, time) and the order's fee
 * so far, whose growth is that fill's fee; maker or taker from the fee's rate (or the order).
 */

/**
 * A record of push_user_incr_record: [0 id, 1 price, 2 amount, 3 filled, 4 filled value, 5 type,
 * 6 placement time, 7 status, 8 fee, 9 acctType, 10 useZbFee, 11 customerOrderId, 12 change time,
 * 13 latest fill's trade id, 14 its price, 15 its amount, 16 its time] (docs/websocket.md).
 */
export type OrderRecord = [
  string,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  number,
  ...unknown[],
];

/** A market's fee rates as decimal text (`0.002`). */
export interface Rates {
  readonly makerFee: string;
  readonly takerFee: string;
}

export interface Fill {
  readonly tradeId: number;
  readonly orderId: string;
  readonly time: number;
  readonly buy: boolean;
  readonly price: number;
  readonly amount: number;
  /** In the coin the fill received: the base for a buy, the quote for a sell. */
  readonly fee: number;
  readonly role: 'maker' | 'taker';
}

/**
 * Maker or taker: by the fee's rate when the market's two rates differ (fee = received × rate);
 * otherwise a PostOnly order is a maker, an IOC a taker, and a limit order took liquidity when
 * the fill came at its placement (the same time), made it when it came later.
 */
export function roleOf(r: OrderRecord, fee: number, received: number, m: Rates): 'maker' | 'taker' {
  const maker = Number(m.makerFee);
  const taker = Number(m.takerFee);
  if (maker !== taker && received > 0) {
    const rate = fee / received;
    return Math.abs(rate - maker) <= Math.abs(rate - taker) ? 'maker' : 'taker';
  }
  const kind = Math.floor(r[5] / 2);
  if (kind === 1) return 'maker';
  if (kind === 2) return 'taker';
  return Number(r[16]) <= r[6] ? 'taker' : 'maker';
}

/** Follows one market's order records; `fillOf` turns a change into the fill it carries, if any. */
export class FillTracker {
  /** Per order: the last trade id seen and the fee so far. */
  readonly #seen = new Map<string, { tradeId: number; fee: number }>();

  /** The snapshot: what the open orders had filled before, so that it is not listed again. */
  baseline(records: readonly OrderRecord[]): void {
    this.#seen.clear();
    for (const r of records) this.#seen.set(r[0], { tradeId: Number(r[13] ?? 0), fee: r[8] });
  }

  fillOf(r: OrderRecord, m: Rates): Fill | undefined {
    const tradeId = Number(r[13] ?? 0);
    const before = this.#seen.get(r[0]) ?? { tradeId: 0, fee: 0 };
    this.#seen.set(r[0], { tradeId: Math.max(tradeId, before.tradeId), fee: r[8] });
    if (r[7] === 1 || r[7] === 2) this.#seen.delete(r[0]);
    if (tradeId <= before.tradeId) return undefined;
    const buy = r[5] % 2 === 1;
    const price = Number(r[14]);
    const amount = Number(r[15]);
    const fee = Math.max(0, r[8] - before.fee);
    const received = buy ? amount : amount * price;
    return {
      tradeId,
      orderId: r[0],
      time: Number(r[16]),
      buy,
      price,
      amount,
      fee,
      role: roleOf(r, fee, received, m),
    };
  }
}
