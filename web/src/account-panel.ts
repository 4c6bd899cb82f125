/**
 * @module account-panel — sign-in with an API key (kept in this tab's sessionStorage only, and
 * only as sha1hex(secret), the signing key) and the account: open orders live from
 * `push_user_incr_record` with cancel, balances live from `push_user_asset`, order history and
 * bills from the signed REST API, deposit addresses, withdrawal and the demo faucet. The margin
 * tab is margin-panel.ts's.
 */
import {
  byId,
  dateTime,
  el,
  fixed,
  ORDER_STATUS,
  orderTypeName,
  type App,
  type Balance,
  type OrderRecord,
} from './app.ts';
import { redraw } from './frame.ts';
import { explain, type Context } from './messages.ts';
import { ApiError, KEY_REFUSED, SignedApi, type Json } from './rest.ts';
import { secretHash, signedSubscription } from './sign.ts';
import { withdrawForm } from './withdraw-form.ts';

const SESSION_KEY = 'bourse.session';
/** The record's acctType (field 9): which account an order freezes and settles in. */
const ACCOUNT_NAME: Readonly<Record<number, string>> = { 0: 'spot', 1: 'isolated', 2: 'cross' };
const PAGE_SIZE = '20';
/** Order history is read again at most this often while orders finish (ms). */
const HISTORY_REFRESH_MS = 1_000;

function show(target: HTMLElement, text: string, kind: 'ok' | 'error' | 'address' | '' = ''): void {
  target.textContent = text;
  target.className = `result ${kind}`;
}

/** A table row of text cells (the first `numeric` flags right-align a cell). */
function row(cells: readonly string[], numeric: readonly boolean[] = []): HTMLElement {
  const tr = el('tr');
  cells.forEach((text, i) => tr.append(el('td', numeric[i] === true ? 'num' : '', text)));
  return tr;
}

export function accountPanel(app: App): void {
  const signInForm = byId<HTMLFormElement>('sign-in');
  const signedIn = byId('signed-in');
  const userName = byId('user-name');
  const note = byId('signed-out-note');
  const tabs = byId('account-tabs');
  const openBody = byId('open-orders').querySelector('tbody') as HTMLElement;
  const cancelAll = byId<HTMLButtonElement>('cancel-all');
  const historyBody = byId('order-history').querySelector('tbody') as HTMLElement;
  const balancesBody = byId('balances').querySelector('tbody') as HTMLElement;
  const billsBody = byId('bills').querySelector('tbody') as HTMLElement;
  const open = new Map<string, OrderRecord>();
  let tab = 'open';
  let unsubscribers: (() => void)[] = [];
  let recordUnsubscribe: (() => void) | undefined;
  let historyTimer: ReturnType<typeof setTimeout> | undefined;

  // ── sign-in ──
  const signIn = async (api: SignedApi): Promise<void> => {
    const info = await api.call('getAccountInfo');
    sessionStorage.setItem(SESSION_KEY, JSON.stringify({ accessKey: api.accessKey, keyHex: api.keyHex }));
    userName.textContent = String(info?.result?.base?.username ?? '');
    api.onKeyRefused = () => app.keyRefused.set(app.keyRefused.value + 1);
    app.notice(''); // a refusal said before (a wrong secret, a sign-out) no longer holds
    app.api.set(api);
  };
  const signOut = (): void => {
    sessionStorage.removeItem(SESSION_KEY);
    app.api.set(undefined);
  };
  // The venue no longer knows the key (revoked, or a new venue on the same address): signed out, said why.
  app.keyRefused.listen(() => {
    if (app.api.value === undefined) return;
    signOut();
    app.notice(explain(new ApiError(KEY_REFUSED, 'refused'), 'session'), true);
  });
  signInForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const accessKey = byId<HTMLInputElement>('access-key').value.trim();
    const secret = byId<HTMLInputElement>('secret-key');
    if (accessKey === '' || secret.value === '') return app.notice('Give the API key and its secret.');
    const api = new SignedApi(accessKey, secretHash(secret.value.trim()));
    secret.value = '';
    signIn(api).catch((error: unknown) => app.notice(`Sign-in refused. ${explain(error, 'sign-in')}`, true));
  });
  byId('sign-out').addEventListener('click', signOut);
  const saved = sessionStorage.getItem(SESSION_KEY);
  if (saved !== null) {
    try {
      const { accessKey, keyHex } = JSON.parse(saved) as { accessKey: string; keyHex: string };
      signIn(new SignedApi(accessKey, keyHex)).catch((error: unknown) => {
        sessionStorage.removeItem(SESSION_KEY);
        app.notice(explain(error, 'session'), true);
      });
    } catch {
      sessionStorage.removeItem(SESSION_KEY);
    }
  }

  // ── live account state ──
  const renderOpen = (): void => {
    const m = app.market.value;
    const rows = [...open.values()].sort((a, b) => Number(b[0]) - Number(a[0]));
    cancelAll.hidden = rows.length === 0;
    cancelAll.textContent = `Cancel all ${rows.length} ${m.name.replace('_', '/').toUpperCase()}`;
    openBody.replaceChildren(
      ...rows.map((r) => {
        const tr = row(
          [
            dateTime(r[6]),
            r[5] % 2 === 1 ? 'buy' : 'sell',
            orderTypeName(r[5]),
            fixed(r[1], m.priceScale),
            fixed(r[2], m.amountScale),
            fixed(r[3], m.amountScale),
            ORDER_STATUS[r[7]] ?? String(r[7]),
            ACCOUNT_NAME[Number(r[9] ?? 0)] ?? String(r[9]),
          ],
          [false, false, false, true, true, true],
        );
        tr.dataset['order'] = r[0];
        (tr.children[1] as HTMLElement).className = r[5] % 2 === 1 ? 'up' : 'down';
        const cancel = el('button', 'cancel', 'Cancel');
        cancel.setAttribute('type', 'button');
        cancel.addEventListener('click', () => void cancelOrder(r[0], cancel));
        const cell = el('td');
        cell.append(cancel);
        tr.append(cell);
        return tr;
      }),
    );
  };

  const cancelOrder = async (id: string, button: HTMLElement): Promise<void> => {
    const api = app.api.value;
    if (api === undefined) return;
    button.setAttribute('disabled', '');
    try {
      await api.call('cancelOrder', [
        ['currency', app.market.value.name],
        ['id', id],
      ]);
    } catch (error) {
      app.notice(`Cancel refused: ${explain(error)}`);
      button.removeAttribute('disabled');
    }
  };

  // Cancel-all: every open order of the market, one signed cancelOrder each (cancelAllOrdersAfter
  // is the interface's dead-man timer, a minute later, not a cancel now).
  cancelAll.addEventListener('click', () => void cancelAllOrders());
  const cancelAllOrders = async (): Promise<void> => {
    const api = app.api.value;
    const m = app.market.value;
    const ids = [...open.keys()];
    if (api === undefined || ids.length === 0) return;
    if (!confirm(`Cancel your ${ids.length} open ${m.name.replace('_', '/').toUpperCase()} order(s)?`))
      return;
    cancelAll.disabled = true;
    const refused: string[] = [];
    for (const id of ids) {
      await api
        .call('cancelOrder', [
          ['currency', m.name],
          ['id', id],
        ])
        .catch((error: unknown) => refused.push(`${id}: ${explain(error)}`));
    }
    cancelAll.disabled = false;
    app.notice(
      refused.length === 0
        ? `${ids.length} order(s) cancelled.`
        : `${ids.length - refused.length} of ${ids.length} cancelled; refused: ${refused.join('; ')}`,
    );
  };

  const renderBalances = (): void => {
    balancesBody.replaceChildren(
      ...[...app.balances.value].map(([coin, b]) =>
        row([coin.toUpperCase(), b.available, b.frozen], [false, true, true]),
      ),
    );
  };

  const subscribeRecords = (): void => {
    recordUnsubscribe?.();
    recordUnsubscribe = undefined;
    open.clear();
    redraw(renderOpen);
    const api = app.api.value;
    if (api === undefined) return;
    const m = app.market.value;
    const request = signedSubscription(
      { channel: 'push_user_incr_record', event: 'addChannel', market: `${m.wireId}default` },
      api.accessKey,
      api.keyHex,
    );
    recordUnsubscribe = app.feed.subscribe(withoutEvent(request), (message: Json) => {
      if (message.dataType === 'userRecord') {
        open.clear();
        for (const r of message.records as OrderRecord[]) open.set(r[0], r);
        app.orderRecords.set({ snapshot: true, records: message.records as OrderRecord[] });
      } else {
        app.orderRecords.set({ snapshot: false, records: [message.record as OrderRecord] });
        const r = message.record as OrderRecord;
        if (r[7] === 0 || r[7] === 3) open.set(r[0], r);
        else {
          open.delete(r[0]);
          scheduleHistory();
        }
      }
      redraw(renderOpen);
    });
  };

  app.api.listen((api) => {
    for (const stop of unsubscribers) stop();
    unsubscribers = [];
    signInForm.hidden = api !== undefined;
    signedIn.hidden = api === undefined;
    note.hidden = api !== undefined;
    for (const pane of document.querySelectorAll<HTMLElement>('[data-pane]'))
      pane.hidden = api === undefined || pane.dataset['pane'] !== tab;
    if (api === undefined) {
      app.balances.set(new Map());
      subscribeRecords();
      return;
    }
    const request = signedSubscription(
      { channel: 'push_user_asset', event: 'addChannel' },
      api.accessKey,
      api.keyHex,
    );
    unsubscribers.push(
      app.feed.subscribe(withoutEvent(request), (message: Json) => {
        const balances = new Map<string, Balance>();
        for (const c of message.coins as Json[])
          balances.set(String(c.key), { available: String(c.available), frozen: String(c.freez) });
        app.balances.set(balances);
      }),
    );
    subscribeRecords();
    refreshTab();
  }, true);
  app.market.listen(() => {
    subscribeRecords();
    refreshTab();
  });
  app.balances.listen(() => redraw(renderBalances));

  // ── tabs ──
  tabs.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest('button');
    const name = button?.dataset['tab'];
    if (name === undefined) return;
    tab = name;
    for (const b of tabs.querySelectorAll('button')) b.classList.toggle('active', b === button);
    const signed = app.api.value !== undefined;
    for (const pane of document.querySelectorAll<HTMLElement>('[data-pane]'))
      pane.hidden = !signed || pane.dataset['pane'] !== tab;
    refreshTab();
  });

  const refreshTab = (): void => {
    app.marginShown.set(app.api.value !== undefined && tab === 'margin');
    if (tab === 'history') void loadHistory();
    if (tab === 'bills') void loadBills();
  };

  const scheduleHistory = (): void => {
    if (tab !== 'history' || historyTimer !== undefined) return;
    historyTimer = setTimeout(() => {
      historyTimer = undefined;
      void loadHistory();
    }, HISTORY_REFRESH_MS);
  };

  const loadHistory = async (): Promise<void> => {
    const api = app.api.value;
    if (api === undefined) return;
    const m = app.market.value;
    try {
      const orders = (await api.call('getOrdersIgnoreTradeType', [
        ['currency', m.name],
        ['pageIndex', '1'],
        ['pageSize', PAGE_SIZE],
      ])) as Json[];
      historyBody.replaceChildren(
        ...orders.map((o) =>
          row(
            [
              dateTime(Number(o.trade_date)),
              Number(o.type) % 2 === 1 ? 'buy' : 'sell',
              orderTypeName(Number(o.type)),
              fixed(o.price, m.priceScale),
              fixed(o.total_amount, m.amountScale),
              fixed(o.trade_amount, m.amountScale),
              String(o.trade_money),
              String(o.fees),
              ORDER_STATUS[Number(o.status)] ?? String(o.status),
            ],
            [false, false, false, true, true, true, true, true],
          ),
        ),
      );
    } catch (error) {
      historyBody.replaceChildren(row([`Order history: ${explain(error)}`]));
    }
  };

  const loadBills = async (): Promise<void> => {
    const api = app.api.value;
    if (api === undefined) return;
    try {
      const reply = await api.call('getSpotBills', [
        ['pageIndex', '1'],
        ['pageSize', PAGE_SIZE],
      ]);
      billsBody.replaceChildren(
        ...(reply.result as Json[]).map((b) =>
          row(
            [
              dateTime(Number(b.date)),
              String(b.currencyName).toUpperCase(),
              b.typeDesc,
              b.changeAmount,
              b.balance,
              b.remark,
            ],
            [false, false, false, true, true],
          ),
        ),
      );
    } catch (error) {
      billsBody.replaceChildren(row([`Bills: ${explain(error)}`]));
    }
  };

  // ── funds ──
  /**
   * On submit of `formId` (signed in): `run` makes the signed call and returns the text shown in
   * `resultId` (an `address` result keeps its line breaks); a refusal shows its message and code.
   */
  const onSubmit = (
    formId: string,
    resultId: string,
    run: (api: SignedApi) => Promise<string>,
    kind: 'ok' | 'address' = 'ok',
    context: Context = 'other',
  ): void => {
    const result = byId(resultId);
    byId<HTMLFormElement>(formId).addEventListener('submit', (event) => {
      event.preventDefault();
      const api = app.api.value;
      if (api === undefined) return;
      run(api).then(
        (text) => show(result, text, kind),
        (error: unknown) => show(result, explain(error, context), 'error'),
      );
    });
  };

  for (const select of document.querySelectorAll<HTMLSelectElement>('.coin-select')) {
    select.replaceChildren(
      ...app.coins.map((c) => {
        const option = el('option', '', c.toUpperCase()) as HTMLOptionElement;
        option.value = c;
        return option;
      }),
    );
  }

  onSubmit(
    'deposit',
    'deposit-result',
    async (api) => {
      const coin = byId<HTMLSelectElement>('deposit-coin').value;
      const reply = await api.call('getPayinAddress', [['currency', coin]]);
      const lines = (reply.message.datas as Json[]).map((d) =>
        d.isUseMemo === true
          ? `${d.blockChain}: account ${d.account}, memo ${d.memo}`
          : `${d.blockChain}: ${d.address}`,
      );
      return lines.join('\n') || 'No address.';
    },
    'address',
    'deposit',
  );

  withdrawForm(app);

  // ── the demo faucet ──
  const faucet = app.venue?.demo?.faucet as Record<string, string> | undefined;
  if (faucet !== undefined && Object.keys(faucet).length > 0) {
    byId('faucet-tab').hidden = false;
    const coin = byId<HTMLSelectElement>('faucet-coin');
    const amount = byId<HTMLInputElement>('faucet-amount');
    coin.replaceChildren(
      ...Object.entries(faucet).map(([c, perHour]) => {
        const option = el('option', '', `${c.toUpperCase()} (up to ${perHour} an hour)`) as HTMLOptionElement;
        option.value = c;
        return option;
      }),
    );
    onSubmit('faucet', 'faucet-result', async (api) => {
      await api.call('faucet', [
        ['currency', coin.value],
        ['amount', amount.value.trim()],
      ]);
      return `${amount.value} ${coin.value.toUpperCase()} credited.`;
    });
  }
}

/** The subscription as the feed takes it: everything but `event`. */
function withoutEvent(message: Record<string, string>): Record<string, string> {
  const { event: _event, ...rest } = message;
  return rest;
}
