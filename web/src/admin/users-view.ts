/**
 * @module users-view — users with search and paging (`/admin/users/list`), and one user in full
 * (`/admin/users/show`): balances of every account, open orders, bills, deposits, withdrawals and
 * API keys (never secrets).
 */
import type { Json } from './api.ts';
import { h, pager, section, table } from './dom.ts';
import { text, time } from './format.ts';
import type { View } from './view.ts';

/** Users a page. */
export const USERS_PAGE = 25;
/** Rows of each section of a user's view a page. */
export const SECTION_PAGE = 20;

/** A user's place in the tree of sub-accounts: whose sub-account it is, or how many it has. */
function family(u: Json): string {
  const subs = (u.subAccounts as string[] | undefined) ?? [];
  if (typeof u.mainUser === 'string') return `sub of ${u.mainUser}`;
  return subs.length === 0 ? '' : `${subs.length} sub-account${subs.length === 1 ? '' : 's'}`;
}

export const usersView: View = async (ctx) => {
  const root = h('div', { id: 'users' });
  const results = h('div', { id: 'users-results' });
  const search = h('input', {
    id: 'user-search',
    type: 'search',
    placeholder: 'name or id',
    spellcheck: 'false',
    autocomplete: 'off',
  });
  let query = '';
  const load = async (offset: number): Promise<void> => {
    const reply = await ctx.api.call('/admin/users/list', { search: query, limit: USERS_PAGE, offset });
    results.replaceChildren(
      table<Json>(
        [
          { title: 'Id', cell: (u) => u.id, num: true },
          { title: 'Name', cell: (u) => h('a', { href: `#user/${u.id}` }, u.name) },
          { title: 'Created', cell: (u) => time(u.created) },
          { title: 'Status', cell: (u) => `${u.status}${u.demo ? ' (demo)' : ''}` },
          { title: 'Keys', cell: (u) => u.keys, num: true },
          { title: 'Open orders', cell: (u) => u.openOrders, num: true },
          { title: 'Family', cell: family },
        ],
        reply.users as Json[],
        { id: 'users-table', empty: 'No user matches.', rowAttrs: (u) => ({ 'data-user': u.id }) },
      ),
      pager(
        Number(reply.total),
        offset,
        USERS_PAGE,
        (o) => void load(o).catch((e: unknown) => ctx.notice(String(e))),
      ),
    );
  };
  const form = h(
    'form',
    {
      class: 'inline-form',
      id: 'users-search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        query = search.value.trim();
        load(0).catch((e: unknown) => ctx.notice(e instanceof Error ? e.message : String(e)));
      },
    },
    search,
    h('button', { type: 'submit' }, 'Search'),
  );
  await load(0);
  root.append(section('Users', 'users-list', form, results));
  return root;
};

export const userView: View = async (ctx, arg) => {
  const root = h('div', { id: 'user' });
  const load = async (offset: number): Promise<void> => {
    const r = await ctx.api.call('/admin/users/show', { user: arg ?? '', limit: SECTION_PAGE, offset });
    const longest = Math.max(r.openOrders.total, r.bills.total, r.deposits.total, r.withdrawals.total);
    const page = pager(
      longest,
      offset,
      SECTION_PAGE,
      (o) => void load(o).catch((e: unknown) => ctx.notice(String(e))),
    );
    const u = r.user;
    root.replaceChildren(
      h(
        'div',
        { class: 'user-head' },
        h('a', { href: '#users' }, '‹ Users'),
        h('h1', { id: 'user-name' }, u.name),
        h(
          'span',
          { class: 'muted' },
          `id ${u.id} · ${u.status}${u.demo ? ' · demo' : ''} · created ${time(u.created)}` +
            (typeof u.mainUser === 'string'
              ? ` · sub-account of ${u.mainUser}`
              : (u.subAccounts as string[] | undefined)?.length
                ? ` · sub-accounts: ${(u.subAccounts as string[]).join(', ')}`
                : ''),
        ),
      ),
      h(
        'p',
        { class: 'note' },
        `Each list shows its newest rows ${offset + 1}–${offset + SECTION_PAGE}.`,
        page,
      ),
      ...(r.accounts as Json[]).map((a) =>
        section(
          `Balances (${a.account})`,
          `balances-${a.account}`,
          table<Json>(
            [
              { title: 'Coin', cell: (b) => String(b.coin).toUpperCase() },
              { title: 'Available', cell: (b) => b.available, num: true },
              { title: 'Frozen', cell: (b) => b.frozen, num: true },
            ],
            a.balances as Json[],
            {
              rowAttrs: (b) => ({
                'data-coin': b.coin,
                class: /^0*(\.0*)?$/.test(`${b.available}${b.frozen}`) ? 'zero' : undefined,
              }),
            },
          ),
        ),
      ),
      section(
        `Open orders (${r.openOrders.total})`,
        'user-orders',
        table<Json>(
          [
            { title: 'Id', cell: (o) => o.id },
            { title: 'Time', cell: (o) => time(o.time) },
            { title: 'Market', cell: (o) => o.market },
            { title: 'Side', cell: (o) => h('span', { class: o.side }, o.side) },
            { title: 'Kind', cell: (o) => o.kind },
            { title: 'Price', cell: (o) => o.price, num: true },
            { title: 'Amount', cell: (o) => o.amount, num: true },
            { title: 'Filled', cell: (o) => o.filled, num: true },
            { title: 'Client id', cell: (o) => text(o.clientOrderId) },
          ],
          r.openOrders.rows as Json[],
          { empty: 'No open order.' },
        ),
      ),
      section(
        `Bills (${r.bills.total})`,
        'user-bills',
        table<Json>(
          [
            { title: 'Time', cell: (b) => time(b.time) },
            { title: 'Coin', cell: (b) => String(b.coin).toUpperCase() },
            { title: 'Type', cell: (b) => b.type },
            { title: 'Change', cell: (b) => b.change, num: true },
            { title: 'Balance', cell: (b) => b.balance, num: true },
            { title: 'Reference', cell: (b) => text(b.ref) },
          ],
          r.bills.rows as Json[],
          { empty: 'No bill.' },
        ),
      ),
      section(
        `Deposits (${r.deposits.total})`,
        'user-deposits',
        table<Json>(
          [
            { title: 'Time', cell: (d) => time(d.time) },
            { title: 'Coin', cell: (d) => `${String(d.coin).toUpperCase()} ${d.chain ?? ''}` },
            { title: 'Amount', cell: (d) => d.amount, num: true },
            { title: 'Status', cell: (d) => d.status },
            { title: 'Conf.', cell: (d) => text(d.confirmations), num: true },
            { title: 'Transaction', cell: (d) => h('code', {}, text(d.txHash)) },
            { title: 'Note', cell: (d) => text(d.note) },
          ],
          r.deposits.rows as Json[],
          { empty: 'No deposit.' },
        ),
      ),
      section(
        `Withdrawals (${r.withdrawals.total})`,
        'user-withdrawals',
        table<Json>(
          [
            { title: 'Id', cell: (w) => w.id },
            { title: 'Time', cell: (w) => time(w.time) },
            { title: 'Coin', cell: (w) => `${String(w.coin).toUpperCase()} ${w.chain ?? ''}` },
            { title: 'Amount', cell: (w) => w.amount, num: true },
            { title: 'Fee', cell: (w) => w.fee, num: true },
            { title: 'Address', cell: (w) => h('code', {}, w.address) },
            { title: 'Status', cell: (w) => w.status },
            { title: 'Transaction', cell: (w) => h('code', {}, text(w.txHash)) },
          ],
          r.withdrawals.rows as Json[],
          { empty: 'No withdrawal.', rowAttrs: (w) => ({ 'data-withdrawal': w.id }) },
        ),
      ),
      section(
        `API keys (${(r.keys as Json[]).length})`,
        'user-keys',
        table<Json>(
          [
            { title: 'Access key', cell: (k) => h('code', {}, k.accessKey) },
            { title: 'Permissions', cell: (k) => (k.permissions as string[]).join(', ') || 'none' },
            { title: 'Bound IPs', cell: (k) => (k.ips as string[]).join(', ') || 'any' },
            { title: 'Replay protection', cell: (k) => (k.replayProtection ? 'yes' : 'no') },
          ],
          r.keys as Json[],
          { empty: 'No API key.' },
        ),
      ),
    );
  };
  await load(0);
  return root;
};
