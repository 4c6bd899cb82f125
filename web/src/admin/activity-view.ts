/**
 * @module activity-view — the venue-wide lists (issue 31): deposits (`/admin/deposits/list`),
 * withdrawals (`/admin/withdrawals/list`) and trades (`/admin/trades/list`) of every user, newest
 * first, paged, with filters: user, coin (or market for trades), status, and a time range (UTC
 * dates). One list at a time, chosen by the hash: `#activity/deposits`, `…/withdrawals`, `…/trades`.
 */
import type { Json } from './api.ts';
import { h, pager, section, table, type Column } from './dom.ts';
import { text, time } from './format.ts';
import type { View } from './view.ts';

export const ACTIVITY_PAGE = 25;

interface List {
  readonly name: 'deposits' | 'withdrawals' | 'trades';
  readonly title: string;
  readonly path: string;
  /** The second filter: a coin, or for trades a market. */
  readonly scope: 'coin' | 'market';
  readonly statuses: readonly string[];
  readonly extra?: Record<string, string>;
  readonly columns: readonly Column<Json>[];
}

const coinOf = (row: Json): string => `${String(row.coin).toUpperCase()} ${row.chain ?? ''}`;
/** The user's page (users/show takes a name as well as an id). */
const userLink = (name: unknown): HTMLElement =>
  h('a', { href: `#user/${encodeURIComponent(String(name))}`, class: 'user' }, String(name));

const LISTS: readonly List[] = [
  {
    name: 'deposits',
    title: 'Deposits',
    path: '/admin/deposits/list',
    scope: 'coin',
    statuses: ['confirming', 'credited', 'failed'],
    columns: [
      { title: 'Time', cell: (d) => time(d.time) },
      { title: 'User', cell: (d) => userLink(d.user) },
      { title: 'Coin', cell: coinOf },
      { title: 'Amount', cell: (d) => d.amount, num: true },
      { title: 'Status', cell: (d) => d.status },
      { title: 'Conf.', cell: (d) => text(d.confirmations), num: true },
      { title: 'Transaction', cell: (d) => h('code', {}, text(d.txHash)) },
      { title: 'Note', cell: (d) => text(d.note) },
    ],
  },
  {
    name: 'withdrawals',
    title: 'Withdrawals',
    path: '/admin/withdrawals/list',
    scope: 'coin',
    statuses: ['submitted', 'approved', 'sending', 'sent', 'confirmed', 'succeeded', 'failed', 'cancelled'],
    extra: { order: 'newest' },
    columns: [
      { title: 'Id', cell: (w) => w.id },
      { title: 'Time', cell: (w) => time(w.submitTime) },
      { title: 'User', cell: (w) => userLink(w.user) },
      { title: 'Coin', cell: coinOf },
      { title: 'Amount', cell: (w) => w.amount, num: true },
      { title: 'Fee', cell: (w) => w.fee, num: true },
      { title: 'Address', cell: (w) => h('code', {}, w.address) },
      { title: 'Status', cell: (w) => w.state },
      { title: 'Transaction', cell: (w) => h('code', {}, text(w.txHash)) },
    ],
  },
  {
    name: 'trades',
    title: 'Trades',
    path: '/admin/trades/list',
    scope: 'market',
    statuses: [],
    columns: [
      { title: 'Time', cell: (t) => time(t.time) },
      { title: 'Market', cell: (t) => t.market },
      { title: 'Price', cell: (t) => t.price, num: true },
      { title: 'Amount', cell: (t) => t.amount, num: true },
      { title: 'Value', cell: (t) => t.value, num: true },
      { title: 'Taker side', cell: (t) => h('span', { class: t.takerSide }, t.takerSide) },
      { title: 'Taker', cell: (t) => userLink(t.taker) },
      { title: 'Maker', cell: (t) => userLink(t.maker) },
    ],
  },
];

/** A UTC date (`YYYY-MM-DD`) as ms at its start, or at its end with `end`; undefined when empty. */
function dateMs(value: string, end: boolean): string | undefined {
  if (value === '') return undefined;
  const start = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(start) ? undefined : String(end ? start + 86_400_000 - 1 : start);
}

export const activityView: View = async (ctx, arg) => {
  const list = LISTS.find((l) => l.name === arg) ?? (LISTS[0] as List);
  const root = h('div', { id: 'activity' });
  const input = (name: string, placeholder: string, type = 'text'): HTMLInputElement =>
    h('input', { name, placeholder, type, size: 12, spellcheck: 'false', autocomplete: 'off' });
  const user = input('user', 'name or id');
  const scope = input(list.scope, list.scope === 'coin' ? 'usdt' : 'btc_usdt');
  const status = h(
    'select',
    { name: 'status' },
    h('option', { value: '' }, 'any status'),
    ...list.statuses.map((s) => h('option', { value: s }, s)),
  );
  const from = input('from', 'from', 'date');
  const to = input('to', 'to', 'date');
  const results = h('div', { id: 'activity-results' });
  const load = async (offset: number): Promise<void> => {
    const reply = await ctx.api.call(list.path, {
      ...list.extra,
      user: user.value.trim() || undefined,
      [list.scope]: scope.value.trim() || undefined,
      status: status.value || undefined,
      from: dateMs(from.value, false),
      to: dateMs(to.value, true),
      limit: ACTIVITY_PAGE,
      offset,
    });
    results.replaceChildren(
      table<Json>(list.columns, reply[list.name] as Json[], {
        id: 'activity-table',
        empty: `No ${list.name} match.`,
      }),
      pager(
        Number(reply.total),
        offset,
        ACTIVITY_PAGE,
        (o) => void load(o).catch((e: unknown) => ctx.notice(e instanceof Error ? e.message : String(e))),
      ),
      ...(reply.capped === true
        ? [h('p', { class: 'note' }, `More than ${String(reply.total)} trades match: narrow the filters.`)]
        : []),
    );
  };
  const form = h(
    'form',
    {
      id: 'activity-filters',
      class: 'inline-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        load(0).catch((e: unknown) => ctx.notice(e instanceof Error ? e.message : String(e)));
      },
    },
    h('label', {}, 'User ', user),
    h('label', {}, list.scope === 'coin' ? 'Coin ' : 'Market ', scope),
    list.statuses.length === 0 ? null : h('label', {}, 'Status ', status),
    h('label', {}, 'From ', from),
    h('label', {}, 'To ', to),
    h('button', { type: 'submit' }, 'Filter'),
  );
  await load(0);
  root.append(
    h(
      'nav',
      { class: 'subtabs' },
      ...LISTS.map((l) =>
        h(
          'a',
          { href: `#activity/${l.name}`, class: l === list ? 'active' : undefined, 'data-list': l.name },
          l.title,
        ),
      ),
    ),
    section(`${list.title} of every user`, `activity-${list.name}`, form, results),
  );
  return root;
};
