/**
 * @module markets-view — every market (`/admin/markets/list`, paged) with its status, fees, best
 * bid and ask, last price, 24 h volume and open orders; Halt and Resume (`/admin/markets/status`).
 * For admins: add a market (`/admin/markets/add`), change its fees (`/admin/markets/change`) and
 * close it for good (`/admin/markets/close`), each confirmed first — journaled commands like
 * every runtime change, audited under the operator's name.
 */
import type { Json } from './api.ts';
import { confirmButton, h, pager, section, table } from './dom.ts';
import { percent, text } from './format.ts';
import { act, may, type Console, type View } from './view.ts';

export const MARKETS_PAGE = 25;

/** The fields of a new market, as `/admin/markets/add` takes them (see docs/operations.md). */
const ADD_MARKET_FIELDS: readonly (readonly [name: string, label: string, placeholder: string])[] = [
  ['market', 'Market', 'sol_usdt'],
  ['priceScale', 'Price decimals', '2'],
  ['amountScale', 'Amount decimals', '4'],
  ['minAmount', 'Min amount', '0.01'],
  ['minSize', 'Min total', '5'],
  ['makerFee', 'Maker fee', '0.001'],
  ['takerFee', 'Taker fee', '0.002'],
];

/** The form that adds a market (`/admin/markets/add`); the reply's message is shown as it is. */
function addMarketForm(ctx: Parameters<View>[0], done: () => void): HTMLFormElement {
  const inputs = ADD_MARKET_FIELDS.map(([name, label, placeholder]) =>
    h('label', {}, label, ' ', h('input', { name, placeholder, required: true, size: 10 })),
  );
  const form = h(
    'form',
    { id: 'add-market-form', class: 'inline-form' },
    ...inputs,
    h('button', { type: 'submit' }, 'Add'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const fields: Record<string, string> = {};
    for (const [name] of ADD_MARKET_FIELDS) {
      const input = form.elements.namedItem(name) as HTMLInputElement;
      fields[name] = input.value.trim();
    }
    void ctx.api
      .call('/admin/markets/add', fields)
      .then(() => {
        ctx.notice(`${fields.market} added: it is listed and takes orders.`, true);
        done();
      })
      .catch((error: unknown) =>
        ctx.notice(`no market added: ${error instanceof Error ? error.message : String(error)}`),
      );
  });
  return form;
}

/** Fee fields in place of the row's Fees button: maker and taker as fractions, then a confirmation. */
function feesForm(ctx: Console, m: Json, done: () => void): HTMLElement {
  const maker = h('input', { name: 'makerFee', value: m.makerFee, size: 8, 'aria-label': 'maker fee' });
  const taker = h('input', { name: 'takerFee', value: m.takerFee, size: 8, 'aria-label': 'taker fee' });
  const confirm = h('span', {});
  const form = h(
    'form',
    {
      class: 'inline-form fees-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const [makerFee, takerFee] = [maker.value.trim(), taker.value.trim()];
        confirm.replaceChildren(
          confirmButton(
            'Save',
            `Maker ${percent(makerFee)}, taker ${percent(takerFee)} on ${String(m.market)}?`,
            () =>
              act(
                ctx,
                `${String(m.market)} fees unchanged`,
                () => ctx.api.call('/admin/markets/change', { market: m.market, makerFee, takerFee }),
                `${String(m.market)} fees: maker ${percent(makerFee)}, taker ${percent(takerFee)}.`,
                done,
              ),
          ),
        );
        (confirm.querySelector('button') as HTMLButtonElement).click();
      },
    },
    'maker ',
    maker,
    ' taker ',
    taker,
    h('button', { type: 'submit' }, 'Save…'),
    confirm,
  );
  return form;
}

export const marketsView: View = async (ctx) => {
  const root = h('div', { id: 'markets' });
  const load = async (offset: number): Promise<void> => {
    const reply = await ctx.api.call('/admin/markets/list', { limit: MARKETS_PAGE, offset });
    const reload = (): void => void load(offset).catch((e: unknown) => ctx.notice(String(e)));
    const setStatus = (m: Json, status: 'trading' | 'halted') => async (): Promise<void> => {
      try {
        await ctx.api.call('/admin/markets/status', { market: m.market, status });
        ctx.notice(
          `${m.market} ${status === 'halted' ? 'halted: it refuses orders' : 'resumed: trading'}.`,
          true,
        );
      } catch (error) {
        ctx.notice(`${m.market} unchanged: ${error instanceof Error ? error.message : String(error)}`);
      }
      reload();
    };
    root.replaceChildren(
      section(
        'Markets',
        'markets-list',
        ...(may(ctx, 'admin')
          ? [
              h(
                'div',
                { class: 'toolbar' },
                h(
                  'button',
                  {
                    id: 'add-market',
                    type: 'button',
                    onclick: (event: Event) => {
                      const button = event.currentTarget as HTMLButtonElement;
                      button.replaceWith(addMarketForm(ctx, reload));
                    },
                  },
                  'Add market',
                ),
              ),
            ]
          : []),
        table<Json>(
          [
            { title: 'Market', cell: (m) => m.market },
            { title: 'Status', cell: (m) => h('span', { class: `status ${m.status}` }, m.status) },
            { title: 'Maker fee', cell: (m) => percent(m.makerFee), num: true },
            { title: 'Taker fee', cell: (m) => percent(m.takerFee), num: true },
            { title: 'Min amount', cell: (m) => m.minAmount, num: true },
            { title: 'Min size', cell: (m) => m.minSize, num: true },
            { title: 'Best bid', cell: (m) => text(m.bestBid), num: true },
            { title: 'Best ask', cell: (m) => text(m.bestAsk), num: true },
            { title: 'Last', cell: (m) => text(m.last), num: true },
            { title: '24 h volume', cell: (m) => text(m.volume24h), num: true },
            { title: 'Open orders', cell: (m) => m.openOrders, num: true },
            ...(may(ctx, 'admin')
              ? [
                  {
                    title: '',
                    cell: (m: Json) =>
                      m.status === 'closed'
                        ? ''
                        : h(
                            'span',
                            { class: 'actions' },
                            h(
                              'button',
                              {
                                type: 'button',
                                class: 'fees',
                                onclick: (event: Event) =>
                                  (event.currentTarget as HTMLElement).replaceWith(feesForm(ctx, m, reload)),
                              },
                              'Fees…',
                            ),
                            confirmButton(
                              'Close',
                              `Close ${String(m.market)} for good? Its orders are cancelled; it cannot reopen.`,
                              () =>
                                act(
                                  ctx,
                                  `${String(m.market)} not closed`,
                                  () => ctx.api.call('/admin/markets/close', { market: m.market }),
                                  `${String(m.market)} closed: its orders cancelled.`,
                                  reload,
                                ),
                              { class: 'close' },
                            ),
                          ),
                  },
                ]
              : []),
            {
              title: '',
              cell: (m) =>
                m.status === 'closed' || !may(ctx, 'operator')
                  ? ''
                  : m.status === 'halted'
                    ? confirmButton('Resume', `Resume trading on ${m.market}?`, setStatus(m, 'trading'), {
                        class: 'resume',
                      })
                    : confirmButton(
                        'Halt',
                        `Halt ${m.market}? It will refuse orders.`,
                        setStatus(m, 'halted'),
                        {
                          class: 'halt',
                        },
                      ),
            },
          ],
          reply.markets as Json[],
          { id: 'markets-table', rowAttrs: (m) => ({ 'data-market': m.market }) },
        ),
        pager(
          Number(reply.total),
          offset,
          MARKETS_PAGE,
          (o) => void load(o).catch((e: unknown) => ctx.notice(String(e))),
        ),
      ),
    );
  };
  await load(0);
  return root;
};
