/**
 * @module order-checks — the order form's checks of what was typed, each said as what to do.
 */
import { decimalsOf, parseDec } from './decimal.ts';

/** What the checks read of a market. */
export interface OrderMarket {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  readonly priceScale: number;
  readonly amountScale: number;
}

/** What is wrong with the price as typed, said as what to do; undefined when it is good. */
export function priceProblem(text: string, m: OrderMarket): string | undefined {
  const quote = m.quote.toUpperCase();
  if (text.trim() === '') return `Enter a price in ${quote}, or click a price in the order book to use it.`;
  if (parseDec(text) === undefined) return `The price is a number in ${quote}, such as 100 or 99.5.`;
  if (decimalsOf(text.trim()) > m.priceScale)
    return `Prices of ${m.name.replace('_', '/').toUpperCase()} have at most ${m.priceScale} decimals: shorten ${text.trim()}.`;
  return undefined;
}

/** What is wrong with the amount as typed, said as what to do; undefined when it is good. */
export function amountProblem(text: string, m: OrderMarket, side: 'buy' | 'sell'): string | undefined {
  const base = m.base.toUpperCase();
  if (text.trim() === '')
    return `Enter how much ${base} to ${side}, a total in ${m.quote.toUpperCase()}, or move the slider.`;
  if (parseDec(text) === undefined) return `The amount is a number of ${base}, such as 0.5.`;
  if (decimalsOf(text.trim()) > m.amountScale)
    return `Amounts of ${base} have at most ${m.amountScale} decimals: shorten ${text.trim()}.`;
  return undefined;
}
