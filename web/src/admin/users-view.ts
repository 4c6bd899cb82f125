/**
 * @module users-view — users with search and paging (`/admin/users/list`), and one user in full
 * (`/admin/users/show`): balances of every account (margin ones with what they owe), open orders,
 * bills, deposits, withdrawals and API keys (never secrets). The user page acts too, each action
 * confirmed first and audited by the server under the operator's name: freeze and unfreeze,
 * credit, cancel the open orders, revoke a key (the CLI's calls: src/api/admin/change-routes.ts,
 * admin-routes.ts).
 */
import type { Json } from './api.ts';
import { confirmButton, h, pager, section, table } from './dom.ts';
import { text, time } from './format.ts';
import { act, may, type Console, type View } from './view.ts';

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

/** The user's actions, for the roles that may take them: freeze, credit, cancel orders. */
function userActions(ctx: Console, r: Json, reload: () => void): HTMLElement {
  const u = r.user;
  const user = String(u.name);
  const run = (what: string, path: string, params: Record<string, string>, success: string) => () =>
    act(ctx, what, () => ctx.api.call(path, params), success, reload);
  const frozen = u.status === 'frozen';
  const coins = ((r.accounts as Json[])[0]?.balances as Json[] | undefined) ?? [];
  const coin = h(
    'select',
    { id: 'credit-coin', name: 'coin' },
    ...coins.map((b) => h('option', { value: b.coin }, String(b.coin).toUpperCase())),
  );
  const amount = h('input', { id: 'credit-amount', name: 'amount', placeholder: 'amount', size: 12 });
  const credit = h('span', { id: 'credit-confirm' });
  const creditForm = h(
    'form',
    {
      id: 'credit-form',
      class: 'inline-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const value = amount.value.trim();
        if (value === '') return;
        // One reference a confirmed credit: the server applies it once, whatever the clicks.
        const ref = `console-${crypto.randomUUID()}`;
        const c = coin.value;
        credit.replaceChildren(
          confirmButton(
            'Credit',
            `Credit ${value} ${c.toUpperCase()} to ${user}?`,
            run(
              `no credit to ${user}`,
              '/admin/deposits/credit',
              { user, coin: c, amount: value, ref },
              `${value} ${c.toUpperCase()} credited to ${user}.`,
            ),
            { class: 'credit' },
          ),
        );
        (credit.querySelector('button') as HTMLButtonElement).click();
      },
    },
    h('label', {}, 'Credit ', coin, ' ', amount),
    h('button', { type: 'submit' }, 'Credit…'),
    credit,
  );
  return section(
    'Actions',
    'user-actions',
    h(
      'div',
      { class: 'toolbar' },
      frozen
        ? confirmButton(
            'Unfreeze',
            `Unfreeze ${user}? Orders and withdrawals work again.`,
            run(`${user} unchanged`, '/admin/users/unfreeze', { user }, `${user} unfrozen: active again.`),
            { id: 'unfreeze' },
          )
        : confirmButton(
            'Freeze',
            `Freeze ${user}? No orders, no withdrawals (reads and cancels work).`,
            run(
              `${user} unchanged`,
              '/admin/users/freeze',
              { user },
              `${user} frozen: orders and withdrawals refused.`,
            ),
            { id: 'freeze' },
          ),
      confirmButton(
        'Cancel all orders',
        `Cancel all ${String(r.openOrders.total)} open orders of ${user}?`,
        run(
          `orders of ${user} not cancelled`,
          '/admin/users/cancel-orders',
          { user },
          `orders of ${user} cancelled.`,
        ),
        { id: 'cancel-orders', disabled: Number(r.openOrders.total) === 0 },
      ),
    ),
    creditForm,
  );
}

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
    const reload = (): void => void load(offset).catch((e: unknown) => ctx.notice(String(e)));
    root.replaceChildren(
      h(
        'div',
        { class: 'user-head' },
        h('a', { href: '#users' }, '‹ Users'),
        h('h1', { id: 'user-name' }, u.name),
        h(
          'span',
          { class: 'muted' },
          `id ${u.id} · `,
          h('span', { id: 'user-status', class: `status ${u.status}` }, u.status),
          `${u.demo ? ' · demo' : ''} · created ${time(u.created)}` +
            (typeof u.mainUser === 'string'
              ? ` · sub-account of ${u.mainUser}`
              : (u.subAccounts as string[] | undefined)?.length
                ? ` · sub-accounts: ${(u.subAccounts as string[]).join(', ')}`
                : ''),
        ),
      ),
      ...(may(ctx, 'operator') ? [userActions(ctx, r, reload)] : []),
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
              // A margin account owes what it borrowed and the interest on it (issue 14).
              ...(a.account === 'spot'
                ? []
                : [
                    { title: 'Borrowed', cell: (b: Json) => b.borrowed, num: true },
                    { title: 'Interest', cell: (b: Json) => b.interest, num: true },
                  ]),
            ],
            a.balances as Json[],
            {
              rowAttrs: (b) => ({
                'data-coin': b.coin,
                class: /^0*(\.0*)?$/.test(`${b.available}${b.frozen}${b.borrowed ?? ''}${b.interest ?? ''}`)
                  ? 'zero'
                  : undefined,
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
            ...(may(ctx, 'operator')
              ? [
                  {
                    title: '',
                    cell: (k: Json) =>
                      confirmButton(
                        'Revoke',
                        `Revoke ${String(k.accessKey).slice(0, 8)}…? Requests signed with it fail from now on.`,
                        () =>
                          act(
                            ctx,
                            'key not revoked',
                            () => ctx.api.call('/admin/keys/revoke', { key: k.accessKey }),
                            `key ${String(k.accessKey).slice(0, 8)}… of ${String(u.name)} revoked.`,
                            reload,
                          ),
                        { class: 'revoke' },
                      ),
                  },
                ]
              : []),
          ],
          r.keys as Json[],
          { empty: 'No API key.', rowAttrs: (k) => ({ 'data-key': k.accessKey }) },
        ),
      ),
    );
  };
  await load(0);
  return root;
};
