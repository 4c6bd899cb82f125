/**
 * @module markets-view — every market (`/admin/markets/list`, paged) with its status, fees, best
 * bid and ask, last price, 24 h volume and open orders; Halt and Resume (`/admin/markets/status`).
 * Adding a market waits for the admin API to have a route for it: the button says so.
 */
import type { Json } from './api.ts';
import { confirmButton, h, pager, section, table } from './dom.ts';
import { percent, text } from './format.ts';
import type { View } from './view.ts';

export const MARKETS_PAGE = 25;

/**
 * The admin route that adds a market, once the admin API has one (issue 16, runtime changes).
 * Until then the button is shown disabled: nothing is faked.
 */
export const ADD_MARKET_ROUTE: string | undefined = undefined;

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
        h(
          'div',
          { class: 'toolbar' },
          h(
            'button',
            {
              id: 'add-market',
              type: 'button',
              disabled: ADD_MARKET_ROUTE === undefined,
              title: 'coming with runtime market changes',
            },
            'Add market',
          ),
          ADD_MARKET_ROUTE === undefined
            ? h('span', { class: 'muted' }, 'coming with runtime market changes')
            : '',
        ),
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
            {
              title: '',
              cell: (m) =>
                m.status === 'halted'
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
