/**
 * @module activity-commands — `bourse deposits` and `bourse trades`: the venue-wide lists of
 * src/api/admin/activity-routes.ts (every user's, newest first), filtered by user, coin or market,
 * status and a UTC date range. (`bourse withdrawals` lists the withdrawals.)
 */
import type { CommandSpec, FlagSpec, FlagValues } from './commands.ts';
import { form } from './change-commands.ts';
import { listed, when } from './view-commands.ts';

export const ACTIVITY_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--coin': { value: '<coin>', help: "only this coin's, e.g. usdt" },
  '--since': { value: '<YYYY-MM-DD>', help: 'from the start of this UTC day' },
  '--until': { value: '<YYYY-MM-DD>', help: 'to the end of this UTC day' },
};

const DAY_MS = 86_400_000;

/** The time range of --since and --until as the admin API's from and to (ms), or a problem. */
function range(flags: FlagValues): [string, string][] | string {
  const out: [string, string][] = [];
  for (const [flag, field, end] of [
    ['--since', 'from', false],
    ['--until', 'to', true],
  ] as const) {
    const text = flags.get(flag)?.[0];
    if (text === undefined) continue;
    const start = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
    if (Number.isNaN(start)) return `${flag} '${text.slice(0, 20)}' must be a UTC date, YYYY-MM-DD`;
    out.push([field, String(end ? start + DAY_MS - 1 : start)]);
  }
  return out;
}

const PAGING = [
  ['--limit', 'limit'],
  ['--offset', 'offset'],
] as const;

export const ACTIVITY_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'deposits',
    args: [],
    flags: ['--user', '--coin', '--status', '--since', '--until', '--limit', '--offset'],
    summary: "every user's deposits, newest first: operator credits, chain deposits, internal transfers",
    details:
      '--user (name or id), --coin, --status (confirming, credited or failed), --since and --until (UTC dates) ' +
      'filter the list; --limit (1 to 1000) and --offset page it.',
    call: (_args, flags) => {
      const times = range(flags);
      if (typeof times === 'string') return times;
      return {
        path: '/admin/deposits/list',
        form: [
          ...form(flags, [
            ['--user', 'user'],
            ['--coin', 'coin'],
            ['--status', 'status'],
          ]),
          ...times,
          ...form(flags, PAGING),
        ],
        show: (b) =>
          listed(b, 'deposits', 'deposits', [
            ['time', (r) => when(r.time)],
            ['user', 'user'],
            ['coin', 'coin'],
            ['chain', (r) => r.chain || '—'],
            ['>amount', 'amount'],
            ['status', 'status'],
            ['transaction', (r) => r.txHash || '—'],
            ['note', 'note'],
          ]),
      };
    },
  },
  {
    name: 'trades',
    args: [],
    flags: ['--market', '--user', '--since', '--until', '--limit', '--offset'],
    summary: "every user's trades, newest first: every trade the history store holds",
    details:
      '--market, --user (taker or maker; name or id), --since and --until (UTC dates) filter the list; ' +
      '--limit (1 to 1000) and --offset page it, to the first 10000 matches (the count stops there).',
    call: (_args, flags) => {
      const times = range(flags);
      if (typeof times === 'string') return times;
      return {
        path: '/admin/trades/list',
        form: [
          ...form(flags, [
            ['--market', 'market'],
            ['--user', 'user'],
          ]),
          ...times,
          ...form(flags, PAGING),
        ],
        show: (b) =>
          (b.capped === true
            ? 'more than 10000 trades match: narrow with --market, --user, --since or --until\n'
            : '') +
          listed(b, 'trades', 'trades', [
            ['time', (r) => when(r.time)],
            ['market', 'market'],
            ['>price', 'price'],
            ['>amount', 'amount'],
            ['>value', 'value'],
            ['taker side', 'takerSide'],
            ['taker', 'taker'],
            ['maker', 'maker'],
          ]),
      };
    },
  },
];
