/**
 * @module order-form — limit, PostOnly and IOC orders for the selected market, by amount, by
 * total (price × amount, in the quote coin) or by a share of the available balance (the slider),
 * with the available balance and the fee estimated from the market's rates (exact decimal
 * arithmetic), in the spot account or a margin one (`acctType`, with `enableExpress` to borrow what
 * the order lacks). The order is a signed `order` call like any client's.
 */
import { byId, type App, type MarketInfo } from './app.ts';
import { div, format, mul, parseDec, rescale, type Dec } from './decimal.ts';
import { explain } from './messages.ts';
import { amountProblem, priceProblem } from './order-checks.ts';

type Side = 'buy' | 'sell';
type Kind = 'limit' | 'postOnly' | 'ioc';

/** Decimals shown for totals and fees: exact up to this many. */
const SHOWN_DECIMALS = 8;

/** A rate `0.002` as a percent text `0.2%`. */
function percent(rate: string): string {
  const r = parseDec(rate);
  return r === undefined ? rate : `${Number(format(mul(r, { units: 100n, scale: 0 })))}%`;
}

/** Trailing zeros after the point dropped: `0.01000000` → `0.01`. */
function trim(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

export function orderForm(app: App): void {
  const form = byId<HTMLFormElement>('order');
  const type = byId<HTMLSelectElement>('order-type');
  const account = byId<HTMLSelectElement>('order-account');
  const express = byId<HTMLInputElement>('order-express');
  const expressLine = byId('order-express-line');
  const price = byId<HTMLInputElement>('order-price');
  const amount = byId<HTMLInputElement>('order-amount');
  const total = byId<HTMLInputElement>('order-total');
  const share = byId<HTMLInputElement>('order-share');
  const shareText = byId('order-share-text');
  const available = byId('order-available');
  const fee = byId('order-fee');
  const submit = byId<HTMLButtonElement>('order-submit');
  const result = byId('order-result');
  const buyTab = byId('side-buy');
  const sellTab = byId('side-sell');
  let side: Side = 'buy';
  /** Which of amount and total the user typed last: the other follows it. */
  let driver: 'amount' | 'total' = 'amount';

  const show = (text: string, kind: 'ok' | 'error' | '' = ''): void => {
    result.textContent = text;
    result.className = `result ${kind}`;
  };

  const update = (): void => {
    const m = app.market.value;
    const p = parseDec(price.value);
    if (driver === 'amount') {
      const a = parseDec(amount.value);
      total.value = p !== undefined && a !== undefined ? trim(format(mul(p, a), SHOWN_DECIMALS)) : '';
    } else {
      const t = parseDec(total.value);
      const a = p !== undefined && t !== undefined ? div(t, p, m.amountScale) : undefined;
      amount.value = a === undefined ? '' : format(a);
    }
    const spot = account.value === '0';
    expressLine.hidden = spot;
    const balance = app.balances.value.get(side === 'buy' ? m.quote : m.base);
    available.textContent =
      !spot || balance === undefined
        ? spot
          ? '–'
          : 'see the margin tab'
        : `${balance.available} ${(side === 'buy' ? m.quote : m.base).toUpperCase()}`;
    fee.textContent = feeText(m);
  };

  const feeText = (m: MarketInfo): string => {
    const kind = type.value as Kind;
    const rate = kind === 'postOnly' ? m.makerFee : m.takerFee;
    const rates =
      kind === 'limit'
        ? `maker ${percent(m.makerFee)}, taker ${percent(m.takerFee)}`
        : `${kind === 'postOnly' ? 'maker' : 'taker'} ${percent(rate)}`;
    // The fee is taken from what the order receives: the base coin for a buy, the quote for a sell.
    const received: Dec | undefined = parseDec(side === 'buy' ? amount.value : total.value);
    const r = parseDec(rate);
    if (received === undefined || r === undefined) return rates;
    const estimate = trim(format(rescale(mul(received, r), SHOWN_DECIMALS, true)));
    const coin = (side === 'buy' ? m.base : m.quote).toUpperCase();
    return `${kind === 'limit' ? 'up to ' : ''}${estimate} ${coin} (${rates})`;
  };

  const setSide = (next: Side): void => {
    side = next;
    resetShare();
    buyTab.classList.toggle('active', side === 'buy');
    sellTab.classList.toggle('active', side === 'sell');
    submit.className = `submit ${side}`;
    const m = app.market.value;
    submit.textContent = `${side === 'buy' ? 'Buy' : 'Sell'} ${m.base.toUpperCase()}`;
    update();
  };

  buyTab.addEventListener('click', () => setSide('buy'));
  sellTab.addEventListener('click', () => setSide('sell'));
  type.addEventListener('change', update);
  account.addEventListener('change', update);
  price.addEventListener('input', update);
  const resetShare = (): void => {
    share.value = '0';
    shareText.textContent = '0%';
  };
  amount.addEventListener('input', () => {
    driver = 'amount';
    resetShare();
    update();
  });
  total.addEventListener('input', () => {
    driver = 'total';
    resetShare();
    update();
  });
  // The slider: that share of the available balance, as the amount (a buy spends the quote coin
  // at the price given; a sell, the base coin), rounded down to the market's amount scale.
  share.addEventListener('input', () => {
    shareText.textContent = `${share.value}%`;
    const m = app.market.value;
    const balance = parseDec(app.balances.value.get(side === 'buy' ? m.quote : m.base)?.available ?? '');
    const p = parseDec(price.value);
    const part = mul(balance ?? { units: 0n, scale: 0 }, { units: BigInt(share.value), scale: 2 });
    const a =
      side === 'sell'
        ? rescale(part, m.amountScale, false)
        : p === undefined
          ? undefined
          : div(part, p, m.amountScale);
    if (account.value !== '0' || balance === undefined || a === undefined) {
      show(
        account.value !== '0'
          ? "The slider sizes spot orders: a margin account's balance is in the margin tab."
          : balance === undefined
            ? 'Sign in to size the order by your balance.'
            : 'Give the price first: the share of your balance buys an amount at that price.',
        'error',
      );
      return;
    }
    show('');
    amount.value = format(a);
    driver = 'amount';
    update();
  });

  app.market.listen((m) => {
    byId('price-unit').textContent = m.quote.toUpperCase();
    byId('amount-unit').textContent = m.base.toUpperCase();
    byId('total-unit').textContent = m.quote.toUpperCase();
    price.value = '';
    amount.value = '';
    total.value = '';
    show('');
    setSide(side);
  }, true);
  app.pickedPrice.listen((p) => {
    price.value = p;
    update();
  });
  app.balances.listen(update);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void place();
  });

  const place = async (): Promise<void> => {
    const api = app.api.value;
    const m = app.market.value;
    if (api === undefined) return show('Sign in with an API key to place orders.', 'error');
    const problem = priceProblem(price.value, m) ?? amountProblem(amount.value, m, side);
    if (problem !== undefined) return show(problem, 'error');
    const params: [string, string][] = [
      ['currency', m.name],
      ['tradeType', side === 'buy' ? '1' : '0'],
      ['price', price.value.trim()],
      ['amount', amount.value.trim()],
    ];
    if (type.value === 'postOnly') params.push(['orderType', '1']);
    if (type.value === 'ioc') params.push(['orderType', '2']);
    if (account.value !== '0') {
      params.push(['acctType', account.value]);
      if (express.checked) params.push(['enableExpress', '1']);
    }
    submit.disabled = true;
    try {
      const reply = await api.call('order', params);
      show(`Order ${String(reply.id)} placed.`, 'ok');
      if (account.value !== '0') app.marginChanged.set(app.marginChanged.value + 1);
    } catch (error) {
      show(explain(error), 'error');
    } finally {
      submit.disabled = false;
    }
  };
}
