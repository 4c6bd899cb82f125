/**
 * @module app — what the panels share: the venue's markets and settings, the selected market, the
 * WebSocket feed, the signed-in key and the account's balances, each with listeners.
 */
import type { Feed } from './feed.ts';
import type { OrderRecord } from './fills.ts';
import type { Json, SignedApi } from './rest.ts';

export type { OrderRecord } from './fills.ts';

/** A market as the page uses it: `/data/v1/markets` and `/data/v1/venueInfo` together. */
export interface MarketInfo {
  /** `btc_usdt` */
  readonly name: string;
  /** `btcusdt`: the id in WebSocket channel names. */
  readonly wireId: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  readonly amountScale: number;
  readonly minAmount: number;
  readonly minSize: number;
  /** Decimal text: `0.002`. */
  readonly makerFee: string;
  readonly takerFee: string;
}

export interface Balance {
  readonly available: string;
  readonly frozen: string;
}

/** A message of the selected market's push_user_incr_record: the snapshot of open orders, or one change. */
export interface OrderRecords {
  readonly snapshot: boolean;
  readonly records: readonly OrderRecord[];
}

type Listener<T> = (value: T) => void;

/** A value with listeners, called on every change. */
export class Observable<T> {
  #value: T;
  readonly #listeners: Listener<T>[] = [];

  constructor(value: T) {
    this.#value = value;
  }

  get value(): T {
    return this.#value;
  }

  set(value: T): void {
    this.#value = value;
    for (const l of this.#listeners) l(value);
  }

  /** Calls `listener` on every change (and once now, with `now`). */
  listen(listener: Listener<T>, now = false): void {
    this.#listeners.push(listener);
    if (now) listener(this.#value);
  }
}

export interface App {
  readonly feed: Feed;
  readonly markets: ReadonlyMap<string, MarketInfo>;
  /** Coins of the venue, in the order getAccountInfo lists them. */
  readonly coins: readonly string[];
  /** `/data/v1/venueInfo`: fee rates, the demo and its faucet, the clock. */
  readonly venue: Json;
  readonly market: Observable<MarketInfo>;
  /** The signed-in key, or undefined. */
  readonly api: Observable<SignedApi | undefined>;
  /** The signed-in account's balances by coin (from push_user_asset). */
  readonly balances: Observable<ReadonlyMap<string, Balance>>;
  /** Whether the margin tab is showing (signed in): the margin panel reads its accounts then. */
  readonly marginShown: Observable<boolean>;
  /** A margin change made from the page (transfer, borrow, repay, a margin order): re-read the accounts. */
  readonly marginChanged: Observable<number>;
  /** A price picked in the book, for the order form. */
  readonly pickedPrice: Observable<string>;
  /** The selected market's latest trade (price text and whether the taker bought). */
  readonly lastTrade: Observable<{ readonly price: string; readonly buy: boolean } | undefined>;
  /** The signed-in account's order records of the selected market, as they arrive. */
  readonly orderRecords: Observable<OrderRecords>;
  /** The venue refused the signed-in key (1003, over REST or the feed): the account panel signs out. */
  readonly keyRefused: Observable<number>;
  /** Shows a short message at the top of the page (`sticky`: until the next one; `''` hides it). */
  notice(text: string, sticky?: boolean): void;
}

/** Number text at a scale, for display (amounts on the wire are JSON numbers at the market's scales). */
export function fixed(value: unknown, scale: number): string {
  const n = Number(value);
  return Number.isFinite(n) ? n.toFixed(scale) : '–';
}

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** `HH:MM:SS` of a time in ms, in the browser's time zone (by hand: Intl's formatting costs ~0.1 ms a call). */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `YYYY-MM-DD HH:MM:SS` of a time in ms, in the browser's time zone. */
export function dateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clockTime(ms)}`;
}

/** The page's elements are in index.html: a missing one is a bug, said at once. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing from index.html`);
  return el as T;
}

/** A new element with a class and text. */
export function el(tag: string, className = '', text = ''): HTMLElement {
  const e = document.createElement(tag);
  if (className !== '') e.className = className;
  if (text !== '') e.textContent = text;
  return e;
}

/** Sets text only when it changed (cheap redraws of reused rows). */
export function setText(e: Element, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

/** Sets the class only when it changed (an unchanged element keeps its computed style). */
export function setClass(e: Element, className: string): void {
  if (e.className !== className) e.className = className;
}

/** The interface's order type codes: 0/1 limit, 2/3 PostOnly, 4/5 IOC; odd is a buy. */
export function orderTypeName(code: number): string {
  return ['Limit', 'PostOnly', 'IOC'][Math.floor(code / 2)] ?? String(code);
}

export const ORDER_STATUS: Readonly<Record<number, string>> = {
  0: 'open',
  1: 'cancelled',
  2: 'done',
  3: 'partly filled',
};
