/**
 * @module view-commands — the `bourse` commands of the operator's views (issue 16, "See"): users,
 * solvency, markets, the venue's state, rate-limit locks and the audit log. Each prints a table for
 * people, or with --json the admin API's answer as one JSON object; lists page with --limit and
 * --offset. The calls are those of src/api/admin/views-routes.ts.
 */
import type { CommandSpec, FlagValues } from './commands.ts';

type Row = Record<string, unknown>;

/** Cells as text: null and undefined as '—'. */
const cell = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value as string | number | boolean);

/** A time in ms as `2026-01-02 03:04:05Z`, or '—'. */
export const when = (ms: unknown): string =>
  typeof ms === 'number' ? `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z` : '—';

/**
 * Rows as an aligned table under a header line. `columns`: [header, field or getter]; a header
 * starting with '>' is right-aligned (numbers).
 */
export function table(
  rows: readonly Row[],
  columns: readonly (readonly [string, string | ((r: Row) => unknown)])[],
): string {
  const heads = columns.map(([h]) => h.replace(/^>/, ''));
  const cells = rows.map((r) => columns.map(([, f]) => cell(typeof f === 'string' ? r[f] : f(r))));
  const widths = heads.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) =>
        (columns[i] as readonly [string, unknown])[0].startsWith('>')
          ? v.padStart(widths[i] as number)
          : v.padEnd(widths[i] as number),
      )
      .join('  ')
      .trimEnd();
  return [line(heads), ...cells.map(line)].join('\n');
}

/** `rows a–b of total`, and how to see more, under a paged list. */
function pageNote(b: Row, shown: number, what: string): string {
  const total = Number(b.total ?? shown);
  const offset = Number(b.offset ?? 0);
  if (total === 0) return `no ${what}`;
  if (shown === 0) return `no ${what} at offset ${offset} (${total} in all)`;
  const more = offset + shown < total ? ` (--offset ${offset + shown} for more)` : '';
  return `${what} ${offset + 1}–${offset + shown} of ${total}${more}`;
}

const pagingForm = (flags: FlagValues): [string, string][] => [
  ...(flags.get('--limit') ?? []).map((v): [string, string] => ['limit', v]),
  ...(flags.get('--offset') ?? []).map((v): [string, string] => ['offset', v]),
];

const PAGING_DETAILS = '--limit (1 to 1000) and --offset page the list.';

/** A list and its page note; `rows` empty gives the note alone. */
export function listed(b: Row, key: string, what: string, columns: Parameters<typeof table>[1]): string {
  const rows = (b[key] as Row[] | undefined) ?? [];
  return rows.length === 0
    ? pageNote(b, 0, what)
    : `${table(rows, columns)}\n${pageNote(b, rows.length, what)}`;
}

/** What an isolated account's level adds to its risk rate (issue 15). */
const LEVEL_NOTE: Readonly<Record<number, string>> = {
  2: ', flagged at the notice line',
  3: ', locked by its liquidation',
};

/** The user's place in the tree of sub-accounts (issue 33), as lines. */
function family(u: Row): string[] {
  const subs = (u.subAccounts as string[] | undefined) ?? [];
  if (typeof u.mainUser === 'string') return [`sub-account of ${u.mainUser} (frozen with it)`];
  return subs.length === 0 ? [] : [`sub-accounts: ${subs.join(', ')}`];
}

/** The tree column of the user list: whose sub-account, or how many it has. */
function tree(r: Row): string {
  const subs = (r.subAccounts as string[] | undefined) ?? [];
  if (typeof r.mainUser === 'string') return `sub of ${r.mainUser}`;
  return subs.length === 0 ? '' : `${subs.length} sub`;
}

function showUser(b: Row): string {
  const u = b.user as Row;
  const lines = [
    `user ${cell(u.name)} (id ${cell(u.id)}): ${cell(u.status)}${u.demo === true ? ', demo' : ''}, created ${when(u.created)}`,
    ...family(u),
  ];
  for (const account of b.accounts as Row[]) {
    const margin = account.account !== 'spot';
    const nonZero = (r: Row): boolean =>
      [r.available, r.frozen, r.borrowed, r.interest].some((v) => v !== undefined && v !== '0');
    const held = (account.balances as Row[]).filter(nonZero);
    lines.push(
      '',
      `${cell(account.account)} balances${margin ? ` (risk rate ${cell(account.riskRate)}${LEVEL_NOTE[Number(account.level)] ?? ''})` : ''}:`,
      held.length === 0
        ? '  (all zero)'
        : table(held, [
            ['coin', 'coin'],
            ['>available', 'available'],
            ['>frozen', 'frozen'],
            ...(margin
              ? ([
                  ['>borrowed', 'borrowed'],
                  ['>interest', 'interest'],
                ] as const)
              : []),
          ]),
    );
  }
  const section = (title: string, key: string, columns: Parameters<typeof table>[1]): void => {
    const s = b[key] as { total: number; rows: Row[] };
    lines.push('', `${title} (${s.rows.length} of ${s.total}):`);
    if (s.rows.length > 0) lines.push(table(s.rows, columns));
  };
  section('open orders', 'openOrders', [
    ['>id', 'id'],
    ['market', 'market'],
    ['side', 'side'],
    ['kind', 'kind'],
    ['>price', 'price'],
    ['>amount', 'amount'],
    ['>filled', 'filled'],
    ['time', (r) => when(r.time)],
  ]);
  section('latest bills', 'bills', [
    ['time', (r) => when(r.time)],
    ['coin', 'coin'],
    ['type', 'type'],
    ['>change', 'change'],
    ['>balance', 'balance'],
    ['ref', 'ref'],
  ]);
  section('deposits', 'deposits', [
    ['time', (r) => when(r.time)],
    ['coin', 'coin'],
    ['chain', 'chain'],
    ['>amount', 'amount'],
    ['status', 'status'],
    ['id', 'id'],
  ]);
  section('withdrawals', 'withdrawals', [
    ['time', (r) => when(r.time)],
    ['>id', 'id'],
    ['coin', 'coin'],
    ['>amount', 'amount'],
    ['>fee', 'fee'],
    ['status', 'status'],
    ['address', 'address'],
  ]);
  const keys = b.keys as Row[];
  lines.push('', `API keys (${keys.length}):`);
  if (keys.length > 0) {
    lines.push(
      table(keys, [
        ['access key', 'accessKey'],
        ['permissions', (r) => (r.permissions as string[]).join(',')],
        ['bound IPs', (r) => ((r.ips as string[]).length === 0 ? 'any' : (r.ips as string[]).join(','))],
        ['replay protection', (r) => (r.replayProtection === true ? 'yes' : 'no')],
      ]),
    );
  }
  return lines.join('\n');
}

function showVenue(b: Row): string {
  const journal = b.journal as Row;
  const history = b.history as Row;
  const snapshot = b.snapshot as Row | null;
  return [
    `ready: ${b.ready === true ? 'yes' : b.ready === false ? 'NO' : '—'} (${cell(b.phase)})`,
    `journal: seq ${cell(journal.lastSeq)}, durable to ${cell(journal.durableSeq)}${journal.error === undefined ? '' : `, FAILED: ${cell(journal.error)}`}`,
    `last snapshot: ${snapshot === null ? 'none' : `seq ${cell(snapshot.seq)} at ${when(snapshot.at)}`}`,
    `history store: behind the engine by ${cell(history.lag)} commands (ready while at most ${cell(history.maxLag)})${history.error === undefined ? '' : `, FAILED: ${cell(history.error)}`}`,
    `open orders: ${cell(b.openOrders)}`,
    `rate-limit locks in force: ${b.rateLimitLocks === null ? 'none (limits switched off)' : cell(b.rateLimitLocks)}`,
  ].join('\n');
}

export const VIEW_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'user list',
    args: [],
    flags: ['--search', '--limit', '--offset'],
    summary: 'users: id, name, created, status, keys, open orders',
    details: `By id. --search keeps those whose name contains the text (any letter case) or whose id it is. ${PAGING_DETAILS}`,
    call: (_args, flags) => ({
      path: '/admin/users/list',
      form: [
        ...(flags.get('--search') ?? []).map((v): [string, string] => ['search', v]),
        ...pagingForm(flags),
      ],
      show: (b) =>
        listed(b, 'users', 'users', [
          ['>id', 'id'],
          ['name', 'name'],
          ['created', (r) => when(r.created)],
          ['status', (r) => `${cell(r.status)}${r.demo === true ? ' (demo)' : ''}`],
          ['>keys', 'keys'],
          ['>open orders', 'openOrders'],
          ['family', tree],
        ]),
    }),
  },
  {
    name: 'user show',
    args: ['<name|id>'],
    flags: ['--limit', '--offset'],
    summary: 'one user in full: balances, open orders, bills, deposits, withdrawals, keys',
    details:
      'A name is looked up first, then an id. Balances of every account (available and frozen); the latest bills, deposits and withdrawals; ' +
      'keys with their permissions and bound IPs (never a secret). --limit (default 20) and --offset page each section; the history sections reach back 1000 rows.',
    call: ([user], flags) => ({
      path: '/admin/users/show',
      form: [['user', user as string], ...pagingForm(flags)],
      show: showUser,
    }),
  },
  {
    name: 'solvency',
    args: ['[coin]'],
    flags: [],
    summary: "per coin: every account kind's holdings, loans and bad debt against the venue's wallets",
    details:
      "Per coin: users' spot available and frozen, their margin accounts (isolated + cross, available+frozen), the lending pool " +
      '(available+frozen: lendable and on offer), the insurance fund, fee income, their sum (books), the loans outstanding (principal + ' +
      "interest owed to the pool and to users' offers), the bad debt written off so far, what the venue's wallets hold on the chain and " +
      'the difference wallet − books. Under the table: whether books = deposited − withdrawn + pool funded, the insurance fund = its ' +
      'income − its cover and the lending pool = its funding + interest − the principal bad debt took from it, for every coin. A negative difference is money the books owe that the wallets do not hold (operator credits ' +
      'and pool funding have no chain deposit behind them). --json gives every figure (docs/operations.md, "Solvency").',
    call: ([coin]) => ({
      path: '/admin/solvency',
      form: coin === undefined ? [] : [['coin', coin]],
      show: (b) => {
        const rows = b.coins as Row[];
        const pair = (available: unknown, frozen: unknown): string =>
          frozen === '0' ? cell(available) : `${cell(available)}+${cell(frozen)}`;
        const shown = table(rows, [
          ['coin', 'coin'],
          ['>users available', 'usersAvailable'],
          ['>users frozen', 'usersFrozen'],
          ['>margin', (r) => pair(r.marginAvailable, r.marginFrozen)],
          ['>lending pool', (r) => pair(r.lendingPoolAvailable, r.lendingPoolFrozen)],
          ['>insurance', 'insurance'],
          ['>fee income', 'feeIncome'],
          ['>books', 'books'],
          ['>loans', (r) => (r.loans as Row | undefined)?.total],
          ['>bad debt', 'badDebt'],
          ['>wallet', 'wallet'],
          ['>difference', 'difference'],
        ]);
        const off = rows.filter(
          (r) => r.imbalance !== '0' || r.insuranceImbalance !== '0' || r.poolImbalance !== '0',
        );
        const check =
          off.length === 0
            ? 'books = deposited − withdrawn + pool funded, insurance = its income − its cover, and the pool = its funding + interest − bad debt, for every coin'
            : `OUT OF BALANCE: ${off.map((r) => `${cell(r.coin)} (books short by ${cell(r.imbalance)}, insurance by ${cell(r.insuranceImbalance)}, the pool by ${cell(r.poolImbalance)})`).join(', ')}`;
        return `${shown}\n${check}`;
      },
    }),
  },
  {
    name: 'markets',
    args: ['[market]'],
    flags: ['--limit', '--offset'],
    summary: 'markets: status, fees, best bid and ask, 24 h volume, open orders',
    details: `Fees are fractions (0.002 is 0.2 %; a negative maker fee is a rebate). ${PAGING_DETAILS}`,
    call: ([market], flags) => ({
      path: '/admin/markets/list',
      form: [...(market === undefined ? [] : [['market', market] as [string, string]]), ...pagingForm(flags)],
      show: (b) =>
        listed(b, 'markets', 'markets', [
          ['market', 'market'],
          ['status', 'status'],
          ['>maker', 'makerFee'],
          ['>taker', 'takerFee'],
          ['>best bid', 'bestBid'],
          ['>best ask', 'bestAsk'],
          ['>last', 'last'],
          ['>24h volume', 'volume24h'],
          ['>open orders', 'openOrders'],
          ['family', tree],
        ]),
    }),
  },
  {
    name: 'status',
    args: [],
    flags: [],
    summary: 'the venue: readiness, journal position, last snapshot, history lag, locks',
    details:
      'The figures of /ready, the latest snapshot and the rate-limit locks in force (bourse limits lists them).',
    call: () => ({ path: '/admin/venue', form: [], show: showVenue }),
  },
  {
    name: 'limits',
    args: [],
    flags: ['--limit', '--offset'],
    summary: 'rate-limit locks in force: locked IPs, keys at their limit',
    details: `An IP is locked for an hour after its minute's limit; a key is held back within its second. ${PAGING_DETAILS}`,
    call: (_args, flags) => ({
      path: '/admin/limits/list',
      form: pagingForm(flags),
      show: (b) =>
        b.enabled === false
          ? 'rate limits are switched off on this venue'
          : listed(b, 'locks', 'locks', [
              ['kind', 'kind'],
              ['IP or key', 'subject'],
              ['until', (r) => when(r.until)],
            ]),
    }),
  },
  {
    name: 'limits lift',
    args: ['<ip|key>'],
    flags: [],
    summary: 'lift a rate-limit lock on an IP or an API key',
    details: 'Its count starts afresh. Refused when no lock is in force on it. Recorded in the audit log.',
    call: ([subject]) => ({
      path: '/admin/limits/lift',
      form: [['subject', subject as string]],
      show: (b) => {
        const l = b.lifted as Row;
        return `lifted the lock on ${cell(l.kind)} ${cell(l.subject)} (it ran until ${when(l.until)})`;
      },
    }),
  },
  {
    name: 'audit',
    args: [],
    flags: ['--limit', '--offset'],
    summary: 'the audit log: every admin action, newest first',
    details: `When, who (the operator; admin.token for the CLI), what, its parameters (secrets redacted), its result and the journal commands it submitted. ${PAGING_DETAILS}`,
    call: (_args, flags) => ({
      path: '/admin/audit/list',
      form: pagingForm(flags),
      show: (b) =>
        listed(b, 'entries', 'actions', [
          ['>#', 'id'],
          ['time', (r) => when(r.time)],
          ['operator', (r) => (r.operator === undefined || r.operator === null ? '—' : cell(r.operator))],
          ['action', 'action'],
          [
            'parameters',
            (r) =>
              Object.entries(r.params as Row)
                .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : cell(v)}`)
                .join(' '),
          ],
          [
            'result',
            (r) =>
              r.code === undefined || r.code === null
                ? 'unknown'
                : r.code === 1000
                  ? 'ok'
                  : `${cell(r.code)} ${cell(r.message)}`,
          ],
          [
            'commands',
            (r) =>
              (r.commands as Row[])
                .map((c) => `${cell(c.type)}${c.result === 'OK' ? '' : `:${cell(c.result)}`}`)
                .join(' '),
          ],
        ]),
    }),
  },
];
