/**
 * @module margin-panel — the margin tab (issue 17): the selected market's isolated account (both
 * coins: available, frozen, borrowed, interest, the borrowing limit; the risk rate as the API gives
 * it, "-" without debt, and the lines), the cross account, transfers spot ↔ isolated / cross,
 * borrowing (the rate and term of the cheapest offer shown), repaying part or all, and the loans.
 * Everything is a signed call like any client's (docs/margin.md); the accounts are read while the
 * tab shows, after each change made from the page and, coalesced, when the spot balances move.
 */
import { byId, dateTime, el, type App } from './app.ts';
import { ApiError, type Json, type SignedApi } from './rest.ts';

/** The accounts are read again at most this often while balances move (ms). */
const REFRESH_MS = 1_000;

const describe = (error: unknown): string =>
  error instanceof ApiError ? `${error.message} (${error.code})` : String(error);

function row(cells: readonly string[], numeric: readonly boolean[] = []): HTMLElement {
  const tr = el('tr');
  cells.forEach((text, i) => tr.append(el('td', numeric[i] === true ? 'num' : '', text)));
  return tr;
}

export function marginPanel(app: App): void {
  const isolatedName = byId('margin-isolated-name');
  const isolatedBody = byId('margin-isolated').querySelector('tbody') as HTMLElement;
  const crossBody = byId('margin-cross').querySelector('tbody') as HTMLElement;
  const loansBody = byId('margin-loans').querySelector('tbody') as HTMLElement;
  const risk = byId('margin-risk');
  const crossRisk = byId('margin-cross-risk');
  const lines = byId('margin-lines');
  const result = byId('margin-result');
  const offer = byId('margin-borrow-offer');
  const borrowCoin = byId<HTMLSelectElement>('margin-borrow-coin');
  let timer: ReturnType<typeof setTimeout> | undefined;
  let loading = false;
  let again = false;

  const show = (text: string, kind: 'ok' | 'error' | '' = ''): void => {
    result.textContent = text;
    result.className = `result ${kind}`;
  };

  /** Reads the accounts and loans now, or once more after a read under way. */
  const load = async (): Promise<void> => {
    const api = app.api.value;
    if (api === undefined || !app.marginShown.value) return;
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      await Promise.all([loadIsolated(api), loadCross(api), loadLoans(api), loadOffer(api)]);
    } catch (error) {
      show(`Margin accounts: ${describe(error)}`, 'error');
    } finally {
      loading = false;
      if (again) {
        again = false;
        void load();
      }
    }
  };

  /** A read within REFRESH_MS, however many changes come meanwhile. */
  const schedule = (): void => {
    if (timer !== undefined || !app.marginShown.value) return;
    timer = setTimeout(() => {
      timer = undefined;
      void load();
    }, REFRESH_MS);
  };

  const loadIsolated = async (api: SignedApi): Promise<void> => {
    const m = app.market.value;
    isolatedName.textContent = m.name.replace('_', '/').toUpperCase();
    const reply = await api.call('getLeverAssetsInfo');
    const levers = (reply.message?.datas?.levers ?? []) as Json[];
    const lever = levers.find((l) => l.key === m.wireId);
    const coin = (prefix: 'c' | 'f', name: string): HTMLElement =>
      row(
        [
          name.toUpperCase(),
          lever === undefined ? '0' : String(lever[`${prefix}Available`]),
          lever === undefined ? '0' : String(lever[`${prefix}Freeze`]),
          lever === undefined ? '0' : String(lever[`${prefix}LoanIn`]),
          lever === undefined ? '0' : String(lever[`${prefix}Overdraft`]),
          lever === undefined ? '–' : String(lever[`${prefix}CanLoanIn`]).replace(/\.?0+$/, ''),
        ],
        [false, true, true, true, true, true],
      );
    isolatedBody.replaceChildren(coin('c', m.base), coin('f', m.quote));
    risk.textContent = lever === undefined ? '-' : String(lever.riskRate);
    lines.textContent =
      lever === undefined
        ? 'no isolated account yet: transfer into it'
        : `${lever.leverMultiple}× · opening ${lever.startLine} · notice ${lever.noticeLine} · liquidation ${lever.forceRepayLine}` +
          (Number(lever.unwindPrice) > 0 ? ` · unwind price ${lever.unwindPrice}` : '');
  };

  const loadCross = async (api: SignedApi): Promise<void> => {
    const reply = await api.call('getCrossAssets');
    const list = (reply.result?.list ?? []) as Json[];
    crossBody.replaceChildren(
      ...list
        .filter((c) => Number(c.amount) !== 0 || Number(c.loanIn) !== 0 || Number(c.overdraft) !== 0)
        .map((c) =>
          row(
            [
              String(c.key).toUpperCase(),
              String(c.amount),
              String(c.freeze),
              String(c.loanIn),
              String(c.overdraft),
            ],
            [false, true, true, true, true],
          ),
        ),
    );
    crossRisk.textContent = String(reply.result?.riskRate ?? '-');
  };

  const loadLoans = async (api: SignedApi): Promise<void> => {
    const reply = await api.call('getLoanRecords', [
      ['pageIndex', '1'],
      ['pageSize', '20'],
    ]);
    loansBody.replaceChildren(
      ...(reply.result as Json[]).map((r) => {
        const tr = row(
          [
            dateTime(Number(r.createTime)),
            Number(r.sourceType) === 2 ? 'cross' : `isolated ${String(r.marketName).toUpperCase()}`,
            String(r.coinName).toUpperCase(),
            String(r.amount),
            String(r.balanceAmount),
            String(r.arrearsLx),
            `${(Number(r.rate) * 100).toFixed(4).replace(/\.?0+$/, '')}%`,
            String(r.statusShow),
          ],
          [false, false, false, true, true, true, true],
        );
        tr.dataset['loan'] = String(r.id);
        return tr;
      }),
    );
  };

  /** The cheapest offer of the coin chosen to borrow: its daily rate and term. */
  const loadOffer = async (api: SignedApi): Promise<void> => {
    const coin = borrowCoin.value;
    if (coin === '') return;
    const reply = await api.call('getLoans', [
      ['coin', coin],
      ['pageIndex', '1'],
      ['pageSize', '1'],
    ]);
    const best = (reply.result as Json[])[0];
    offer.textContent =
      best === undefined
        ? `nothing offered in ${coin.toUpperCase()}`
        : `cheapest offer ${best.rateOfDayShow} a day for ${best.repaymentDay} days, ${best.balance} ${coin.toUpperCase()} left`;
  };

  // The coins a margin form takes: the selected market's two.
  app.market.listen((m) => {
    for (const select of document.querySelectorAll<HTMLSelectElement>('.margin-coin')) {
      select.replaceChildren(
        ...[m.quote, m.base].map((c) => {
          const option = el('option', '', c.toUpperCase()) as HTMLOptionElement;
          option.value = c;
          return option;
        }),
      );
    }
    void load();
  }, true);
  borrowCoin.addEventListener('change', () => void load());
  app.marginShown.listen((shown) => {
    if (shown) void load();
  });
  app.marginChanged.listen(() => void load());
  app.balances.listen(schedule);

  /** On submit of `formId` (signed in): `run` makes the call and returns the text shown. */
  const onSubmit = (formId: string, run: (api: SignedApi) => Promise<string>): void => {
    byId<HTMLFormElement>(formId).addEventListener('submit', (event) => {
      event.preventDefault();
      const api = app.api.value;
      if (api === undefined) return;
      run(api).then(
        (text) => {
          show(text, 'ok');
          void load();
        },
        (error: unknown) => show(describe(error), 'error'),
      );
    });
  };
  const value = (id: string): string => byId<HTMLInputElement | HTMLSelectElement>(id).value.trim();
  const marketName = (): [string, string] => ['marketName', app.market.value.wireId];

  onSubmit('margin-transfer', async (api) => {
    const way = value('margin-transfer-way');
    const coin = value('margin-transfer-coin');
    const amount = value('margin-transfer-amount');
    const params: [string, string][] = [
      ['coin', coin],
      ['amount', amount],
    ];
    if (way.endsWith('Lever')) params.push(marketName());
    await api.call(way, params);
    return `${amount} ${coin.toUpperCase()} transferred.`;
  });

  onSubmit('margin-borrow', async (api) => {
    const coin = value('margin-borrow-coin');
    const amount = value('margin-borrow-amount');
    const params: [string, string][] = [
      ['coin', coin],
      ['amount', amount],
      ['repaymentDay', value('margin-borrow-days')],
    ];
    const cross = value('margin-borrow-account') === 'cross';
    if (!cross) params.push(marketName());
    await api.call(cross ? 'doCrossLoan' : 'borrow', params);
    return `${amount} ${coin.toUpperCase()} borrowed.`;
  });

  onSubmit('margin-repay', async (api) => {
    const coin = value('margin-repay-coin');
    const amount = value('margin-repay-amount');
    const params: [string, string][] = [['coin', coin]];
    if (amount !== '') params.push(['repayAmount', amount]);
    const cross = value('margin-repay-account') === 'cross';
    if (!cross) params.push(marketName());
    await api.call(cross ? 'doCrossRepay' : 'doAllRepay', params);
    return amount === ''
      ? `All ${coin.toUpperCase()} owed repaid.`
      : `${amount} ${coin.toUpperCase()} repaid.`;
  });
}
