/**
 * @module dashboard-view — the venue at a glance: health and readiness, the journal, users, key
 * metrics (parsed from `/metrics`), solvency per coin with any difference highlighted, fee income,
 * each market's 24 h volume, and the withdrawals waiting for approval, with Approve and Reject.
 */
import type { Json } from './api.ts';
import { confirmButton, confirming, h, section, table } from './dom.ts';
import { text, time } from './format.ts';
import { mean, parseMetrics, sum, type Metrics } from './prom.ts';
import { keepFresh } from './refresh.ts';
import { may, type Console, type View } from './view.ts';

/** The most markets the dashboard lists (the markets view pages through all). */
const MARKETS_SHOWN = 100;

export const dashboardView: View = async (ctx, _arg, current) => {
  const root = h('div', { id: 'dashboard', class: 'dashboard' });
  const load = async (): Promise<void> => {
    const nodes = await build(ctx, () => void load().catch((e: unknown) => ctx.notice(String(e))));
    // Not while the operator answers a confirmation: the rows would change under the question.
    if (current() && !confirming(root)) root.replaceChildren(...nodes);
  };
  await load();
  keepFresh(ctx, root, current, load);
  return root;
};

async function build(ctx: Console, reload: () => void): Promise<Node[]> {
  const { api } = ctx;
  const [venue, solvency, markets, users, pending, health, ready, metricsText] = await Promise.all([
    api.call('/admin/venue'),
    api.call('/admin/solvency'),
    api.call('/admin/markets/list', { limit: MARKETS_SHOWN }),
    api.call('/admin/users/list', { limit: 1 }),
    api.call('/admin/withdrawals/list', { pending: 1 }),
    api.probe('/health').catch(() => undefined),
    api.probe('/ready').catch(() => undefined),
    api.metrics().catch(() => undefined),
  ]);
  const metrics = metricsText === undefined ? undefined : parseMetrics(metricsText);
  return [
    h('div', { class: 'cards' }, venueCard(venue, users, health, ready), metricsCard(metrics)),
    solvencySection(solvency.coins as Json[]),
    withdrawalsSection(ctx, pending.withdrawals as Json[], reload),
    marketsSection(markets),
    h(
      'p',
      { class: 'updated' },
      `Updated ${time(Date.now())} UTC; every 10 s while shown. `,
      h('button', { id: 'refresh', type: 'button', onclick: reload }, 'Refresh now'),
    ),
  ];
}

/** A definition list of `[term, value, class?]`. */
function facts(id: string, rows: readonly (readonly [string, string, (string | undefined)?])[]): HTMLElement {
  return h(
    'dl',
    { id },
    ...rows.flatMap(([term, value, cls]) => [h('dt', {}, term), h('dd', { class: cls }, value)]),
  );
}

function venueCard(venue: Json, users: Json, health: Json, ready: Json): HTMLElement {
  const alive = health?.status === 'alive';
  const isReady = ready?.ready === true;
  const snapshot = venue.snapshot;
  return section(
    'Venue',
    'venue',
    facts('venue-facts', [
      [
        'Health',
        health === undefined ? 'no answer' : `${health.status} (up ${text(health.uptimeSeconds)} s)`,
        alive ? 'good' : 'bad',
      ],
      [
        'Ready',
        ready === undefined ? 'no answer' : `${isReady ? 'ready' : 'not ready'} (${text(ready.phase)})`,
        isReady ? 'good' : 'bad',
      ],
      ['Users', text(users.total)],
      [
        'Journal',
        `seq ${text(venue.journal.lastSeq)}, durable ${text(venue.journal.durableSeq)}`,
        venue.journal.ok === false ? 'bad' : undefined,
      ],
      ['Last snapshot', snapshot === null ? 'none yet' : `seq ${snapshot.seq} at ${time(snapshot.at)}`],
      [
        'History lag',
        `${text(venue.history.lag)} commands (at most ${text(venue.history.maxLag)})`,
        venue.history.ok === false ? 'bad' : undefined,
      ],
      ['Open orders', text(venue.openOrders)],
      ['Rate-limit locks', venue.rateLimitLocks === null ? 'limits off' : String(venue.rateLimitLocks)],
    ]),
  );
}

const ms = (seconds: number | undefined, digits = 2): string =>
  seconds === undefined || !Number.isFinite(seconds) ? '–' : `${(seconds * 1000).toFixed(digits)} ms`;
const count = (n: number | undefined): string =>
  n === undefined ? '–' : Math.round(n).toLocaleString('en-US');

function metricsCard(metrics: Metrics | undefined): HTMLElement {
  if (metrics === undefined)
    return section('Key metrics', 'metrics', h('p', { class: 'empty' }, '/metrics did not answer.'));
  const rss = sum(metrics, 'process_resident_memory_bytes');
  const flush = mean(metrics, 'bourse_journal_flush_records');
  return section(
    'Key metrics',
    'metrics',
    facts('metrics-facts', [
      ['Commands', count(sum(metrics, 'bourse_commands_total'))],
      ['… carried out (OK)', count(sum(metrics, 'bourse_commands_total', { result: 'OK' }))],
      ['… refused as busy', count(sum(metrics, 'bourse_commands_total', { result: 'BUSY' }) ?? 0)],
      ['Commands in flight', count(sum(metrics, 'bourse_commands_in_flight'))],
      ['Order entry (mean)', ms(mean(metrics, 'bourse_order_entry_latency_seconds'))],
      ['Journal fdatasync (mean)', ms(mean(metrics, 'bourse_journal_fdatasync_seconds'))],
      ['Records per flush (mean)', flush === undefined ? '–' : flush.toFixed(1)],
      ['WebSocket connections', count(sum(metrics, 'bourse_ws_connections'))],
      ['Slow consumers dropped', count(sum(metrics, 'bourse_ws_slow_consumers_dropped_total'))],
      ['Event-loop delay p99', ms(sum(metrics, 'nodejs_eventloop_lag_p99_seconds'), 1)],
      ['Memory (resident)', rss === undefined ? '–' : `${(rss / 1048576).toFixed(0)} MiB`],
    ]),
  );
}

/** Zero is "0" however many decimals the server wrote. */
const isZero = (decimal: string): boolean => /^-?0*(\.0*)?$/.test(decimal);

/** `available+frozen`, or the available alone when nothing is frozen. */
const pair = (available: string, frozen: string): string =>
  isZero(frozen) ? available : `${available}+${frozen}`;

function solvencySection(coins: Json[]): HTMLElement {
  const off = coins.some((c) => c.difference !== null && !isZero(c.difference));
  const unbalanced = coins.filter(
    (c) =>
      !isZero(c.imbalance ?? '0') || !isZero(c.insuranceImbalance ?? '0') || !isZero(c.poolImbalance ?? '0'),
  );
  return section(
    'Solvency',
    'solvency',
    h(
      'p',
      { class: 'note' },
      'Per coin: what every kind of account holds — users’ spot and margin accounts, the lending pool, the insurance ',
      'fund, fee income (the books) — the loans outstanding between them and the bad debt written off, against what ',
      'the venue’s wallets hold. Any difference is shown in red.',
    ),
    table<Json>(
      [
        { title: 'Coin', cell: (c) => String(c.coin).toUpperCase() },
        { title: 'Users available', cell: (c) => c.usersAvailable, num: true },
        { title: 'Users frozen', cell: (c) => c.usersFrozen, num: true },
        { title: 'Margin', cell: (c) => pair(c.marginAvailable, c.marginFrozen), num: true },
        { title: 'Lending pool', cell: (c) => pair(c.lendingPoolAvailable, c.lendingPoolFrozen), num: true },
        { title: 'Insurance', cell: (c) => c.insurance, num: true },
        { title: 'Fee income', cell: (c) => c.feeIncome, num: true },
        { title: 'Books', cell: (c) => c.books, num: true },
        { title: 'Loans', cell: (c) => c.loans.total, num: true },
        { title: 'Bad debt', cell: (c) => c.badDebt, num: true },
        { title: 'Deposited', cell: (c) => c.deposited, num: true },
        { title: 'Withdrawn', cell: (c) => c.withdrawn, num: true },
        { title: 'Pool funded', cell: (c) => c.poolFunded, num: true },
        { title: 'Wallet', cell: (c) => (c.wallet === null ? 'not read' : c.wallet), num: true },
        {
          title: 'Difference',
          num: true,
          cell: (c) =>
            c.difference === null
              ? h('span', { class: 'muted', title: 'a real chain: its wallet is not read here' }, 'n/a')
              : h('span', { class: isZero(c.difference) ? 'diff zero' : 'diff off' }, c.difference),
        },
      ],
      coins,
      { id: 'solvency-table', rowAttrs: (c) => ({ 'data-coin': c.coin }) },
    ),
    h(
      'p',
      { class: unbalanced.length === 0 ? 'note' : 'note bad', id: 'solvency-balance' },
      unbalanced.length === 0
        ? 'Books = deposited − withdrawn + pool funded, insurance = its income − its cover, and the lending pool = its funding + interest − bad debt, for every coin.'
        : `Out of balance: ${unbalanced.map((c) => `${String(c.coin).toUpperCase()} (books short by ${c.imbalance}, insurance by ${c.insuranceImbalance}, the pool by ${c.poolImbalance})`).join(', ')}.`,
    ),
    off
      ? h(
          'p',
          { class: 'note', id: 'solvency-why' },
          'Difference = wallet − books. Money credited by the operator (bourse deposit credit, the demo’s ',
          'opening credits, the lending pool’s funding) never came on chain: it is in the books but not in the ',
          'wallets, and shows here as a negative difference (docs/operations.md, Solvency).',
        )
      : '',
  );
}

function withdrawalsSection(ctx: Console, rows: Json[], reload: () => void): HTMLElement {
  const act = (verb: 'approve' | 'reject', w: Json) => async (): Promise<void> => {
    try {
      const r = await ctx.api.call(`/admin/withdrawals/${verb}`, { id: w.id });
      ctx.notice(`Withdrawal ${w.id} ${verb === 'approve' ? 'approved' : 'rejected'}: now ${r.state}.`, true);
    } catch (error) {
      ctx.notice(
        `Withdrawal ${w.id} not ${verb}d: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    reload();
  };
  return section(
    'Pending withdrawals',
    'withdrawals',
    table<Json>(
      [
        { title: 'Id', cell: (w) => w.id },
        { title: 'Submitted', cell: (w) => time(w.submitTime) },
        { title: 'User', cell: (w) => w.user },
        { title: 'Coin', cell: (w) => `${String(w.coin).toUpperCase()} ${w.chain ?? ''}` },
        { title: 'Amount', cell: (w) => w.amount, num: true },
        { title: 'Fee', cell: (w) => w.fee, num: true },
        { title: 'Address', cell: (w) => h('code', {}, w.address) },
        { title: 'State', cell: (w) => w.state },
        {
          title: '',
          cell: (w) =>
            w.state === 'submitted' && may(ctx, 'operator')
              ? h(
                  'span',
                  { class: 'actions' },
                  confirmButton(
                    'Approve',
                    `Send ${w.amount} ${String(w.coin).toUpperCase()}?`,
                    act('approve', w),
                    {
                      class: 'approve',
                    },
                  ),
                  confirmButton('Reject', 'Cancel it and release the funds?', act('reject', w), {
                    class: 'reject',
                  }),
                )
              : '',
        },
      ],
      rows,
      {
        id: 'pending-withdrawals',
        empty: 'No withdrawal is waiting.',
        rowAttrs: (w) => ({ 'data-withdrawal': w.id }),
      },
    ),
  );
}

function marketsSection(markets: Json): HTMLElement {
  return section(
    'Markets: 24 h volume',
    'volume',
    table<Json>(
      [
        { title: 'Market', cell: (m) => m.market },
        { title: 'Status', cell: (m) => h('span', { class: `status ${m.status}` }, m.status) },
        { title: 'Last', cell: (m) => text(m.last), num: true },
        {
          title: '24 h volume',
          cell: (m) => `${text(m.volume24h)} ${String(m.market).split('_')[0]?.toUpperCase()}`,
          num: true,
        },
        { title: 'Open orders', cell: (m) => m.openOrders, num: true },
      ],
      markets.markets as Json[],
      { id: 'volume-table' },
    ),
  );
}
