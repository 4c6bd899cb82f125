/**
 * @module sandbox-commands — `bourse sandbox save|restore|reset|saves` (a sandbox's save points,
 * src/api/admin/save-point-routes.ts) and `bourse report` (a user's fills, fees, profit and loss,
 * turnover and drawdown over a period, src/report/). docs/sandbox.md describes both.
 */
import type { CommandSpec, FlagSpec, FlagValues } from './commands.ts';

/** `--from` and `--to` as the report reads them (journal copy reads them otherwise: commands.ts). */
export const REPORT_FLAG_SPECS: Readonly<Record<string, FlagSpec>> = {
  '--from': {
    value: '<time>',
    help: 'the period starts then: an ISO time (2026-01-01T10:00:00Z), a UTC date or ms (default: the first bill)',
  },
  '--to': {
    value: '<time>',
    help: 'the period ends then, inclusive: an ISO time, a UTC date (its end) or ms (default: now)',
  },
};

const DAY_MS = 86_400_000;

/** A time of --from or --to as ms since 1970, or a problem. A date alone is its day's start (--from) or end (--to). */
export function reportTime(flag: '--from' | '--to', text: string): number | string {
  if (/^\d{1,16}$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const start = Date.parse(`${text}T00:00:00Z`);
    if (!Number.isNaN(start)) return flag === '--to' ? start + DAY_MS - 1 : start;
  } else if (/^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return at;
  }
  return `${flag} '${text.slice(0, 40)}' is not a time: give an ISO time such as 2026-01-01T10:00:00Z, a UTC date (YYYY-MM-DD) or ms since 1970`;
}

function period(flags: FlagValues): [string, string][] | string {
  const out: [string, string][] = [];
  for (const [flag, field] of [
    ['--from', 'from'],
    ['--to', 'to'],
  ] as const) {
    const text = flags.get(flag)?.[0];
    if (text === undefined) continue;
    const at = reportTime(flag, text);
    if (typeof at === 'string') return at;
    out.push([field, String(at)]);
  }
  return out;
}

const iso = (ms: unknown): string => (typeof ms === 'number' ? new Date(ms).toISOString() : String(ms));

/** The report as an operator reads it. */
function showReport(b: Record<string, unknown>): string {
  const q = String(b.quote);
  const fees = b.fees as { quote: string; other: Record<string, string> };
  const other = Object.entries(fees.other)
    .map(([coin, amount]) => `, ${amount} ${coin}`)
    .join('');
  const dd = b.maxDrawdown as { amount: string; percent: string; from: number; to: number } | undefined;
  return [
    `${String(b.user)} on ${String(b.market)}, ${iso(b.from)} to ${iso(b.to)}`,
    `  fills            ${String(b.fills)} (${String(b.buys)} buys, ${String(b.sells)} sells)`,
    `  turnover         ${String(b.turnover)} ${q}`,
    `  fees             ${fees.quote} ${q}${other}`,
    `  realised P&L     ${String(b.realisedPnl)} ${q} (net of fees)`,
    `  unrealised P&L   ${String(b.unrealisedPnl)} ${q} (${String(b.position)} ${String(b.base)} at ${String(b.endPrice)})`,
    `  account value    ${String(b.startValue)} → ${String(b.endValue)} ${q} (deposits and withdrawals: ${String(b.netFlows)} ${q})`,
    `  largest drawdown ${dd === undefined || dd.amount === '0' ? `0 ${q}` : `${dd.amount} ${q} (${dd.percent} %), ${iso(dd.from)} to ${iso(dd.to)}`}`,
  ].join('\n');
}

export const SANDBOX_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'sandbox save',
    args: ['<name>'],
    flags: [],
    summary: "save the sandbox's whole state as <name> (restore it with bourse sandbox restore)",
    details:
      'A sandbox only (--sandbox). The state goes to <data>/sandbox/<name>.json; a save of the same name is replaced. Names: 1 to 64 letters, digits, - _ or ., starting with a letter or digit. Prints the state hash a restore gives back.',
    call: ([name]) => ({
      path: '/admin/sandbox/save',
      form: [['name', name as string]],
      show: (b) => `saved '${String(b.name)}' at seq ${String(b.seq)}: state hash ${String(b.stateHash)}`,
    }),
  },
  {
    name: 'sandbox restore',
    args: ['<name>'],
    flags: [],
    summary: 'bring the sandbox back to save point <name>, at once',
    details:
      'A sandbox only. Balances, orders, users and their API keys are as they were saved (a key saved still works); ids keep counting. The restore is journaled with the state, so a restart comes back to it. An unknown name changes nothing.',
    call: ([name]) => ({
      path: '/admin/sandbox/restore',
      form: [['name', name as string]],
      show: (b) => `restored '${String(b.name)}' at seq ${String(b.seq)}: state hash ${String(b.stateHash)}`,
    }),
  },
  {
    name: 'sandbox reset',
    args: [],
    flags: [],
    summary: 'back to a fresh demo venue: the demo users with their demo funds and keys, nothing else',
    details:
      'A sandbox only. Every other user, every order, trade balance and deposit goes; the demo users keep their API keys (the bots and a page signed in as demo-trader keep working). Journaled like a restore.',
    call: () => ({
      path: '/admin/sandbox/reset',
      form: [],
      show: (b) =>
        `reset to a fresh demo venue (${String(b.users)} demo users) at seq ${String(b.seq)}: state hash ${String(b.stateHash)}`,
    }),
  },
  {
    name: 'sandbox saves',
    args: [],
    flags: [],
    summary: "the sandbox's save points: name, venue time, seq and state hash",
    details: 'A sandbox only.',
    call: () => ({
      path: '/admin/sandbox/saves',
      form: [],
      show: (b) => {
        const rows = b.saves as { name: string; savedAt: number; seq: number; stateHash: string }[];
        if (rows.length === 0) return 'no save points';
        return rows.map((p) => `${p.name}  ${iso(p.savedAt)}  seq ${p.seq}  ${p.stateHash}`).join('\n');
      },
    }),
  },
  {
    name: 'report',
    args: ['<user>'],
    flags: ['--market', '--from', '--to'],
    ownFlagSpecs: REPORT_FLAG_SPECS,
    summary: "a bot author's report: fills, fees, realised and unrealised P&L, turnover, largest drawdown",
    details:
      "The user's spot account on one market (--market; default the one market it traded in the period), in the market's quote coin, over --from to --to. --json gives the account's value over time too (the page charts it).",
    call: ([user], flags) => {
      const times = period(flags);
      if (typeof times === 'string') return times;
      const market = flags.get('--market')?.[0];
      return {
        path: '/admin/report',
        form: [
          ['user', user as string],
          ...(market === undefined ? [] : [['market', market] as [string, string]]),
          ...times,
        ],
        show: showReport,
      };
    },
  },
];
